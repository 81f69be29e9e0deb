import InternalProtocol
import QueryLanguage

/// The column functions Backendless offers in `props` and where clauses (MySQL's names), computed
/// in SQL: date parts of DATETIME values (in UTC), string functions of text values, `NOW()`.
/// `props=TIME(created)` answers under the key `Time`, the function's name capitalised.
enum ScalarFunctions {
    /// What a function takes and gives.
    struct Signature {
        /// The kind of every argument: a DATETIME, a text or a number.
        enum Kind { case datetime, text, number }

        let arguments: [Kind]
        /// How many trailing arguments may be left out.
        let optional: Int
        /// Takes any number of text arguments (CONCAT).
        let variadic: Bool
        let result: ColumnType
        /// The SQL around the arguments: `prefix`, arguments joined by `separator`, `suffix`.
        let prefix: String
        let separator: String
        let suffix: String
    }

    private static func datePart(_ field: String) -> Signature {
        Signature(
            arguments: [.datetime], optional: 0, variadic: false, result: .int,
            prefix: "extract(\(field) from (", separator: "", suffix: ") AT TIME ZONE 'UTC')::bigint")
    }

    private static func formatted(_ pattern: String) -> Signature {
        Signature(
            arguments: [.datetime], optional: 0, variadic: false, result: .string, prefix: "to_char((",
            separator: "", suffix: ") AT TIME ZONE 'UTC', '\(pattern)')")
    }

    private static func text(
        _ function: String, result: ColumnType = .string, arguments: [Signature.Kind] = [.text], optional: Int = 0
    )
        -> Signature
    {
        Signature(
            arguments: arguments, optional: optional, variadic: false, result: result, prefix: "\(function)(",
            separator: ", ",
            suffix: result == .int ? ")::bigint" : ")")
    }

    /// The functions by lower-cased name.
    static let all: [String: Signature] = [
        "date": formatted("YYYY-MM-DD"), "time": formatted("HH24:MI:SS"),
        "year": datePart("year"), "month": datePart("month"), "day": datePart("day"), "dayofmonth": datePart("day"),
        "hour": datePart("hour"), "minute": datePart("minute"), "second": datePart("second"), "week": datePart("week"),
        "dayofweek": Signature(
            arguments: [.datetime], optional: 0, variadic: false, result: .int, prefix: "(extract(dow from (",
            separator: "", suffix: ") AT TIME ZONE 'UTC') + 1)::bigint"),
        "unixtimestamp": Signature(
            arguments: [.datetime], optional: 0, variadic: false, result: .int, prefix: "extract(epoch from ",
            separator: "",
            suffix: ")::bigint"),
        "now": Signature(
            arguments: [], optional: 0, variadic: false, result: .datetime, prefix: "now(", separator: "", suffix: ")"),
        "upper": text("upper"), "lower": text("lower"), "trim": text("btrim"), "ltrim": text("ltrim"),
        "rtrim": text("rtrim"),
        "reverse": text("reverse"), "length": text("char_length", result: .int),
        "char_length": text("char_length", result: .int),
        "substring": text("substr", arguments: [.text, .number, .number], optional: 1),
        "left": text("left", arguments: [.text, .number]), "right": text("right", arguments: [.text, .number]),
        "concat": Signature(
            arguments: [.text], optional: 0, variadic: true, result: .string, prefix: "concat(", separator: ", ",
            suffix: ")"),
    ]

    /// The key a function's value answers under when no alias names it: `TIME` → `Time`.
    static func key(_ name: String) -> String {
        name.prefix(1).uppercased() + name.dropFirst().lowercased()
    }
}

extension ExpressionCompiler {
    /// Writes scalar function `name` over `arguments`, each checked against its signature (1017).
    func scalar(
        _ name: String, _ signature: ScalarFunctions.Signature, _ arguments: [ValueExpression], into sql: inout SQL
    )
        throws -> ColumnType
    {
        let counts =
            signature.variadic ? 1...100 : (signature.arguments.count - signature.optional)...signature.arguments.count
        guard counts.contains(arguments.count) else {
            throw DataError.invalidQuery(
                "\(name.uppercased())() takes \(counts.lowerBound == counts.upperBound ? "\(counts.lowerBound)" : "\(counts.lowerBound) to \(counts.upperBound)") arguments"
            )
        }
        sql.append(signature.prefix)
        for (index, argument) in arguments.enumerated() {
            if index > 0 { sql.append(signature.separator) }
            let kind = signature.variadic ? .text : signature.arguments[index]
            let context: ColumnType =
                switch kind {
                case .datetime: .datetime
                case .text: .string
                case .number: .int
                }
            // PostgreSQL's string functions take int positions and lengths, not bigint.
            if kind == .number { sql.append("(") }
            let type = try value(argument, context: context, into: &sql)
            if kind == .number { sql.append(")::int") }
            let fits =
                switch kind {
                case .datetime: type == .datetime
                case .text: type?.isTextual ?? true
                case .number: type?.isNumeric ?? false
                }
            guard fits else {
                throw DataError.invalidQuery("\(name.uppercased())() takes a \(kind) value as argument \(index + 1)")
            }
        }
        sql.append(signature.suffix)
        return signature.result
    }
}
