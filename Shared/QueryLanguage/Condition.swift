/// A property named in a query: `age`, a dotted relation path `address.city`, or an inverse
/// relation path `Person[friends].objectId` (children whose parents match).
package struct PropertyPath: Sendable, Hashable, CustomStringConvertible {
    /// The parent table and its relation column of an inverse path.
    package struct Inverse: Sendable, Hashable {
        /// The parent table.
        package var table: String
        /// The parent's relation column that points at the queried table.
        package var column: String

        /// Creates an inverse prefix.
        package init(table: String, column: String) {
            self.table = table
            self.column = column
        }
    }

    /// The dotted segments after any inverse prefix.
    package var segments: [String]
    /// The `Table[column]` prefix of an inverse path.
    package var inverse: Inverse?

    /// Creates a path.
    package init(_ segments: [String], inverse: Inverse? = nil) {
        self.segments = segments
        self.inverse = inverse
    }

    /// A single column of the queried table (no relation hop).
    package var column: String? {
        inverse == nil && segments.count == 1 ? segments[0] : nil
    }

    package var description: String {
        let prefix = inverse.map { "\($0.table)[\($0.column)]." } ?? ""
        return prefix + segments.joined(separator: ".")
    }
}

/// A value inside a condition or an update expression.
package indirect enum ValueExpression: Sendable, Hashable {
    case property(PropertyPath)
    case string(String)
    case integer(Int64)
    case number(Double)
    case boolean(Bool)
    case null
    /// `left op right` with `+ - * / %`.
    case arithmetic(ArithmeticOperator, ValueExpression, ValueExpression)
    /// Unary minus.
    case negated(ValueExpression)
    /// A function call such as `distance(...)` or `mi(200)`; names are lower-cased.
    case function(String, [ValueExpression])
    /// A list (the right side of `IN`, or a list parameter of BQL).
    case list([ValueExpression])
}

extension ValueExpression {
    /// A numeric literal's value, unary minus included (`5`, `-2.5`); nil for anything else.
    package var numericLiteral: Double? {
        switch self {
        case .integer(let integer): Double(integer)
        case .number(let number): number
        case .negated(let inner): inner.numericLiteral.map { -$0 }
        default: nil
        }
    }
}

/// Arithmetic operators of value expressions.
package enum ArithmeticOperator: String, Sendable, Hashable {
    case add = "+", subtract = "-", multiply = "*", divide = "/", remainder = "%"
}

/// Comparison operators; date keywords (`after`, `at or before`, …) parse to these too.
package enum ComparisonOperator: String, Sendable, Hashable, CaseIterable {
    case equal = "=", notEqual = "!=", less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
}

/// A parsed where clause: the tree every query dialect maps onto and the SQL compiler consumes.
package indirect enum Condition: Sendable, Hashable {
    case and([Condition])
    case or([Condition])
    case not(Condition)
    case comparison(ValueExpression, ComparisonOperator, ValueExpression)
    /// `value [NOT] LIKE pattern`.
    case like(ValueExpression, pattern: ValueExpression, negated: Bool)
    /// `value [NOT] IN (list)`.
    case membership(ValueExpression, [ValueExpression], negated: Bool)
    /// `value IS [NOT] NULL`.
    case nullCheck(ValueExpression, isNull: Bool)
    /// `value [NOT] BETWEEN low AND high`.
    case between(ValueExpression, ValueExpression, ValueExpression, negated: Bool)
    /// A JSON array property holding every listed value (QuickBlox `all`).
    case containsAll(ValueExpression, [ValueExpression])
    /// Always true or always false.
    case constant(Bool)
}

/// Why a query text was refused.
package struct QueryLanguageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of refusal this is.
    package enum Kind: Sendable, Equatable {
        /// The text is not valid in the language.
        case syntax
        /// The text is valid but over a size or nesting limit.
        case tooComplex
    }

    /// The refusal's kind.
    package var kind: Kind
    /// A message for the client.
    package var message: String

    /// Creates an error.
    package init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    package var description: String { message }
}

/// Size and nesting limits every parser enforces, so a hostile clause costs little.
package struct QueryLimits: Sendable {
    /// Longest accepted text, in UTF-8 bytes.
    package var maximumLength: Int
    /// Deepest accepted nesting of parentheses, `NOT`s and arithmetic.
    package var maximumDepth: Int
    /// Most accepted tokens.
    package var maximumTokens: Int
    /// Most items in one comma list (`props`, `sortBy`, `groupBy`…).
    package var maximumListItems: Int
    /// Most `%` wildcards in one literal `LIKE` pattern.
    package var maximumPatternWildcards: Int
    /// Longest literal `LIKE` pattern, in characters: matching in memory costs up to the text's
    /// length times the pattern's.
    package var maximumPatternLength: Int

    /// Creates limits.
    package init(
        maximumLength: Int = 65_536, maximumDepth: Int = 32, maximumTokens: Int = 10_000, maximumListItems: Int = 1_000,
        maximumPatternWildcards: Int = 32, maximumPatternLength: Int = 1_024
    ) {
        self.maximumLength = maximumLength
        self.maximumDepth = maximumDepth
        self.maximumTokens = maximumTokens
        self.maximumListItems = maximumListItems
        self.maximumPatternWildcards = maximumPatternWildcards
        self.maximumPatternLength = maximumPatternLength
    }

    /// The defaults.
    package static let standard = QueryLimits()
}
