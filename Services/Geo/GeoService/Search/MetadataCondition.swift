import DataEngine
import InternalProtocol
import QueryLanguage

/// Compiles a where clause against points' metadata (`p.metadata`): a property is a metadata
/// member (its name bound as a path, never spliced); a number on the other side compares the
/// member as a number (JSON numbers and numeric strings, anything else unmatched), text
/// compares it as text, `true`/`false` match JSON booleans and those words, `= null` is
/// `IS NULL`. Arithmetic, functions and relation paths are refused with 4003.
struct MetadataCondition {
    /// The metadata column, qualified.
    var column = "p.metadata"

    func compile(_ condition: Condition, into sql: inout SQL) throws(ErrorEnvelope) {
        switch condition {
        case .and(let items): try junction(items, "AND", into: &sql)
        case .or(let items): try junction(items, "OR", into: &sql)
        case .not(let inner):
            sql.append("(NOT ")
            try compile(inner, into: &sql)
            sql.append(")")
        case .comparison(let left, let op, let right): try comparison(left, op, right, into: &sql)
        case .like(let value, let pattern, let negated):
            guard case .string(let text) = pattern else {
                throw GeoError.invalidWhereClause("LIKE needs a text pattern")
            }
            sql.append("(")
            try self.text(value, into: &sql)
            sql.append(negated ? " NOT LIKE " : " LIKE ")
            sql.bind(.text(text))
            sql.append(")")
        case .membership(let value, let items, let negated): try membership(value, items, negated, into: &sql)
        case .nullCheck(let value, let isNull):
            sql.append("(")
            try text(value, into: &sql)
            sql.append(isNull ? " IS NULL)" : " IS NOT NULL)")
        case .between(let value, let low, let high, let negated):
            let numeric = Self.isNumber(low) && Self.isNumber(high)
            sql.append("(")
            try operand(value, numeric: numeric, into: &sql)
            sql.append(negated ? " NOT BETWEEN " : " BETWEEN ")
            try operand(low, numeric: numeric, into: &sql)
            sql.append(" AND ")
            try operand(high, numeric: numeric, into: &sql)
            sql.append(")")
        case .containsAll: throw GeoError.invalidWhereClause("metadata values are not lists")
        case .constant(let truth): sql.append(truth ? "TRUE" : "FALSE")
        }
    }

    private func junction(_ items: [Condition], _ word: String, into sql: inout SQL) throws(ErrorEnvelope) {
        try sql.junction(items, word) { (sql, item) throws(ErrorEnvelope) in try compile(item, into: &sql) }
    }

    private func comparison(
        _ left: ValueExpression, _ op: ComparisonOperator, _ right: ValueExpression, into sql: inout SQL
    ) throws(ErrorEnvelope) {
        if left == .null || right == .null {
            guard [.equal, .notEqual].contains(op) else {
                throw GeoError.invalidWhereClause("null compares only with = and !=")
            }
            return try compile(.nullCheck(left == .null ? right : left, isNull: op == .equal), into: &sql)
        }
        if case .boolean = right, ![.equal, .notEqual].contains(op) {
            throw GeoError.invalidWhereClause("true and false compare only with = and !=")
        }
        let numeric = Self.isNumber(left) || Self.isNumber(right)
        sql.append("(")
        try operand(left, numeric: numeric, into: &sql)
        sql.append(" \(op.rawValue == "!=" ? "<>" : op.rawValue) ")
        try operand(right, numeric: numeric, into: &sql)
        sql.append(")")
    }

    private func membership(_ value: ValueExpression, _ items: [ValueExpression], _ negated: Bool, into sql: inout SQL)
        throws(ErrorEnvelope)
    {
        guard !items.isEmpty else { return sql.append(negated ? "TRUE" : "FALSE") }
        let numeric = items.allSatisfy(Self.isNumber)
        sql.append("(")
        try operand(value, numeric: numeric, into: &sql)
        sql.append(negated ? " NOT IN (" : " IN (")
        for (offset, item) in items.enumerated() {
            if offset > 0 { sql.append(", ") }
            try operand(item, numeric: numeric, into: &sql)
        }
        sql.append("))")
    }

    /// A property or literal, as a double or as text.
    private func operand(_ value: ValueExpression, numeric: Bool, into sql: inout SQL) throws(ErrorEnvelope) {
        if numeric {
            if let number = value.numericLiteral { return sql.bind(.double(number)) }
            switch value {
            case .property(let path):
                sql.append("geo.metadata_number(\(column) #> ")
                try bindPath(path, into: &sql)
                return sql.append(")")
            case .string(let text):
                // A numeric comparison with a text literal: the text as a number, or no match.
                return sql.bind(Double(text).map { .double($0) } ?? .null("double precision"))
            default: break
            }
        }
        try text(value, into: &sql)
    }

    /// A property's value as text, or a literal as text.
    private func text(_ value: ValueExpression, into sql: inout SQL) throws(ErrorEnvelope) {
        switch value {
        case .property(let path):
            sql.append("(\(column) #>> ")
            try bindPath(path, into: &sql)
            sql.append(")")
        case .string(let text): sql.bind(.text(text))
        case .integer(let integer): sql.bind(.text(String(integer)))
        case .number(let number): sql.bind(.text(String(number)))
        case .boolean(let truth): sql.bind(.text(truth ? "true" : "false"))
        case .null: sql.bind(.null("text"))
        default:
            throw GeoError.invalidWhereClause(
                "metadata conditions compare members with literals; arithmetic, functions and lists are not supported")
        }
    }

    private func bindPath(_ path: PropertyPath, into sql: inout SQL) throws(ErrorEnvelope) {
        guard path.inverse == nil, !path.segments.isEmpty else {
            throw GeoError.invalidWhereClause("'\(path)' is not a metadata member")
        }
        sql.bind(.textArray(path.segments))
    }

    private static func isNumber(_ value: ValueExpression) -> Bool {
        value.numericLiteral != nil
    }
}
