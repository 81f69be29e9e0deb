import Foundation
import QueryLanguage

/// Builds an ``ObjectPredicate``'s tree from a condition, typing every literal exactly as
/// ``ExpressionCompiler`` binds it, and refusing what needs the database.
struct PredicateCompiler {
    let table: TableSchema
    private var types: ExpressionCompiler { ExpressionCompiler(table: table) }

    init(table: TableSchema) {
        self.table = table
    }

    func node(_ condition: Condition) throws -> ObjectPredicate.Node {
        switch condition {
        case .and(let items): return .all(try items.map(node))
        case .or(let items): return .any(try items.map(node))
        case .not(let inner): return .not(try node(inner))
        case .constant(let truth): return .constant(truth)
        case .comparison(let left, let op, let right):
            let context = try types.staticType(left) ?? types.staticType(right)
            try types.requireComparable(context, left)
            if left == .null || right == .null {
                guard op == .equal || op == .notEqual else {
                    throw DataError.invalidQuery("Only = and != compare with null")
                }
                return try node(.nullCheck(right == .null ? left : right, isNull: op == .equal))
            }
            return .compare(try term(left, context), op, try term(right, context))
        case .like(let value, let pattern, let negated):
            guard try types.staticType(value)?.isTextual ?? true else {
                throw DataError.invalidQuery("LIKE applies to text properties, not to '\(value.text)'")
            }
            return .like(try term(value, .string), pattern: try term(pattern, .string), negated: negated)
        case .membership(let value, let items, let negated):
            let context = try types.staticType(value)
            try types.requireComparable(context, value)
            guard !items.isEmpty else { return .constant(negated) }
            return .member(try term(value, context), try items.map { try term($0, context) }, negated: negated)
        case .nullCheck(let value, let isNull):
            return .isNull(try term(value, nil), isNull)
        case .between(let value, let low, let high, let negated):
            let context = try types.staticType(value) ?? types.staticType(low) ?? types.staticType(high)
            try types.requireComparable(context, value)
            return .between(try term(value, context), try term(low, context), try term(high, context), negated: negated)
        case .containsAll:
            throw DataError.notSupportedYet("'all' in real-time where clauses")
        }
    }

    private func term(_ value: ValueExpression, _ context: ColumnType?) throws -> ObjectPredicate.Term {
        switch value {
        case .property(let path):
            guard let name = path.column else {
                throw DataError.notSupportedYet("Relation paths in real-time where clauses ('\(path)')")
            }
            guard let column = table.column(named: name) else {
                throw DataError.columnNotFound(name, table: table.name)
            }
            switch column.type {
            case .json, .fileReference, .relation:
                throw DataError.notSupportedYet(
                    "\(column.type.rawValue) columns in real-time where clauses ('\(column.name)')")
            case .autoIncrement: return .column(column.name, .int)
            default: return .column(column.name, column.type)
            }
        case .arithmetic(let op, let left, let right):
            let type = try types.staticType(value)
            return .arithmetic(op, try term(left, type), try term(right, type))
        case .negated(let inner):
            _ = try types.staticType(value)
            return .negated(try term(inner, context))
        case .function(let name, _):
            throw DataError.notSupportedYet("Functions in real-time where clauses ('\(name)')")
        case .list:
            throw DataError.invalidQuery("A list is only allowed after IN")
        case .string, .integer, .number, .boolean, .null:
            let (encoded, _) = try ExpressionCompiler.encodedLiteral(value, context: context)
            return .literal(try Self.scalar(encoded))
        }
    }

    private static func scalar(_ value: SQLValue) throws -> ObjectPredicate.Scalar {
        switch value {
        case .text(let text): return .text(text)
        case .integer(let integer): return .integer(integer)
        case .double(let double): return .double(double)
        case .boolean(let bool): return .boolean(bool)
        case .timestamp(let date):
            guard let microseconds = TimestampRange.microseconds(date) else {
                throw DataError.invalidQuery("Invalid date format '\(date)'")
            }
            return .integer(microseconds)
        case .null: return .null
        case .json, .textArray: throw DataError.notSupportedYet("JSON values in real-time where clauses")
        }
    }
}
