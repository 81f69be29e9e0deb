import Foundation
import QueryLanguage

/// A where clause evaluated on objects in memory (as REST renders them), giving the answer the
/// SQL compiler's statement gives on their rows: literals take the type of the column they meet
/// through the same encoding (``ValueEncoding``), NULL makes a comparison unknown, and only a
/// true condition matches. Clauses over the table's own scalar columns are accepted; relation
/// paths, functions, JSON and FILE_REF columns are refused (1019) before any event is matched.
/// Text orders by code point, as the database's C collation does.
package struct ObjectPredicate: Sendable {
    indirect enum Node: Sendable {
        case all([Node]), any([Node]), not(Node), constant(Bool)
        case compare(Term, ComparisonOperator, Term)
        case like(Term, pattern: Term, negated: Bool)
        case member(Term, [Term], negated: Bool)
        case isNull(Term, Bool)
        case between(Term, Term, Term, negated: Bool)
    }

    indirect enum Term: Sendable {
        case column(String, ColumnType)
        case literal(Scalar)
        case arithmetic(ArithmeticOperator, Term, Term)
        case negated(Term)
    }

    enum Scalar: Sendable {
        case null, integer(Int64), double(Double), text(String), boolean(Bool)
    }

    let root: Node

    /// Compiles `condition` over `table` (1017 for a clause the SQL compiler refuses, 1019 for
    /// one that needs the database).
    package init(_ condition: Condition, table: TableSchema) throws {
        root = try PredicateCompiler(table: table).node(condition)
    }

    /// Whether `object` satisfies the clause, decided within the budget its text earns
    /// (``MatchBudget/init(evaluating:)``): an object that would need more does not match.
    package func matches(_ object: JSONObject) -> Bool {
        var budget = MatchBudget(evaluating: object)
        return matches(object, budget: &budget)
    }

    /// Whether `object` satisfies the clause, paying `budget` for the text read and compared:
    /// false, with the budget exhausted, when deciding would take more than it holds.
    package func matches(_ object: JSONObject, budget: inout MatchBudget) -> Bool {
        Self.truth(root, object, &budget) == true && !budget.isExhausted
    }

    private static func truth(_ node: Node, _ object: JSONObject, _ budget: inout MatchBudget) -> Bool? {
        switch node {
        case .constant(let value): return value
        case .all(let items): return ThreeValuedLogic.all(items) { truth($0, object, &budget) }
        case .any(let items): return ThreeValuedLogic.any(items) { truth($0, object, &budget) }
        case .not(let inner): return truth(inner, object, &budget).map { !$0 }
        case .compare(let left, let op, let right):
            return compare(value(left, object), value(right, object), &budget).map { op.holds(for: $0) }
        case .like(let term, let pattern, let negated):
            guard case .text(let text) = value(term, object), case .text(let mask) = value(pattern, object) else {
                return nil
            }
            // The pattern may be a column's value: reading it is paid for too.
            guard budget.spend(mask.utf8.count) else { return nil }
            return LikePattern(mask).matches(text, budget: &budget).map { $0 != negated }
        case .member(let term, let items, let negated):
            // `x IN (a, b)` is `x = a OR x = b`.
            let subject = value(term, object)
            let found = ThreeValuedLogic.any(items) { compare(subject, value($0, object), &budget).map { $0 == 0 } }
            return negated ? found.map { !$0 } : found
        case .isNull(let term, let isNull):
            if case .null = value(term, object) { return isNull }
            return !isNull
        case .between(let term, let low, let high, let negated):
            // `x BETWEEN a AND b` is `x >= a AND x <= b`.
            let subject = value(term, object)
            let inside = ThreeValuedLogic.all([(low, ComparisonOperator.greaterOrEqual), (high, .lessOrEqual)]) {
                bound, op in
                compare(subject, value(bound, object), &budget).map { op.holds(for: $0) }
            }
            return negated ? inside.map { !$0 } : inside
        }
    }

    private static func value(_ term: Term, _ object: JSONObject) -> Scalar {
        switch term {
        case .literal(let scalar): return scalar
        case .column(let name, let type): return Scalar(object[name] ?? .null, type: type)
        case .negated(let inner):
            switch value(inner, object) {
            case .integer(let integer): return integer == .min ? .null : .integer(-integer)
            case .double(let double): return .double(-double)
            default: return .null
            }
        case .arithmetic(let op, let left, let right):
            return Arithmetic.apply(op, value(left, object), value(right, object))
        }
    }

    /// How `left` orders against `right` (-1, 0, 1); nil when either is NULL or they do not compare.
    static func compare(_ left: Scalar, _ right: Scalar) -> Int? {
        switch (left, right) {
        case (.integer(let a), .integer(let b)): return order(a, b)
        case (.text(let a), .text(let b)):
            if a == b { return 0 }
            return a.unicodeScalars.lexicographicallyPrecedes(b.unicodeScalars) { $0.value < $1.value } ? -1 : 1
        case (.boolean(let a), .boolean(let b)): return a == b ? 0 : (!a ? -1 : 1)
        default:
            guard let a = left.number, let b = right.number else { return nil }
            return order(a, b)
        }
    }

    /// ``compare(_:_:)``, paying `budget` for the characters two texts may compare; nil once it
    /// has run out.
    private static func compare(_ left: Scalar, _ right: Scalar, _ budget: inout MatchBudget) -> Int? {
        if case .text(let a) = left, case .text(let b) = right, !budget.spend(min(a.utf8.count, b.utf8.count)) {
            return nil
        }
        return compare(left, right)
    }

    private static func order<T: Comparable>(_ a: T, _ b: T) -> Int { a < b ? -1 : a > b ? 1 : 0 }
}

extension MatchBudget {
    /// The budget of one evaluation over `object`: what ``MatchBudget/init(textBytes:)`` grants
    /// for the text of its members.
    package init(evaluating object: JSONObject) {
        self.init(textBytes: object.textBytes)
    }
}

extension JSONObject {
    /// The UTF-8 bytes of the text its members hold: what a clause over it may read.
    package var textBytes: Int {
        members.reduce(0) { $0 + ($1.value.string?.utf8.count ?? 0) }
    }
}

extension ObjectPredicate.Scalar {
    /// A REST value of a column of `type`: DATETIME arrives as epoch milliseconds and is kept
    /// in microseconds.
    init(_ json: JSONValue, type: ColumnType) {
        switch (json, type) {
        case (.integer(let integer), .int), (.integer(let integer), .autoIncrement): self = .integer(integer)
        case (.integer(let integer), .double): self = .double(Double(integer))
        case (.number(let number), .double): self = .double(number)
        // Dates compare in microseconds, as PostgreSQL keeps them; the last 29 years PostgreSQL
        // can store (past 294,247 AD) overflow 64 bits there and compare as doubles.
        case (.integer(let milliseconds), .datetime):
            let (microseconds, overflow) = milliseconds.multipliedReportingOverflow(by: 1000)
            self = overflow ? .double(Double(milliseconds) * 1000) : .integer(microseconds)
        case (.number(let milliseconds), .datetime):
            self = Int64(exactly: (milliseconds * 1000).rounded()).map(Self.integer) ?? .null
        case (.string(let text), _) where type.isTextual: self = .text(text)
        case (.bool(let bool), .boolean): self = .boolean(bool)
        default: self = .null
        }
    }

    var number: Double? {
        switch self {
        case .integer(let integer): Double(integer)
        case .double(let double): double
        default: nil
        }
    }
}

/// `+ - * / %` as PostgreSQL computes them on bigint and double precision: integers stay
/// integers (division truncates), an overflow or a division by zero — an error there — is
/// unknown here.
enum Arithmetic {
    static func apply(_ op: ArithmeticOperator, _ left: ObjectPredicate.Scalar, _ right: ObjectPredicate.Scalar)
        -> ObjectPredicate.Scalar
    {
        if case .integer(let a) = left, case .integer(let b) = right {
            let (result, overflow): (Int64, Bool)
            switch op {
            case .add: (result, overflow) = a.addingReportingOverflow(b)
            case .subtract: (result, overflow) = a.subtractingReportingOverflow(b)
            case .multiply: (result, overflow) = a.multipliedReportingOverflow(by: b)
            case .divide:
                guard b != 0 else { return .null }
                (result, overflow) = a.dividedReportingOverflow(by: b)
            case .remainder:
                guard b != 0 else { return .null }
                (result, overflow) = a.remainderReportingOverflow(dividingBy: b)
            }
            return overflow ? .null : .integer(result)
        }
        guard let a = left.number, let b = right.number else { return .null }
        let result: Double
        switch op {
        case .add: result = a + b
        case .subtract: result = a - b
        case .multiply: result = a * b
        case .divide:
            guard b != 0 else { return .null }
            result = a / b
        case .remainder: return .null  // PostgreSQL has no % for double precision.
        }
        return result.isFinite ? .double(result) : .null
    }
}
