import DataEngine
import InternalProtocol
import QueryLanguage

/// A subscription's selector: an SQL-92 condition over message headers (`city = 'Tokyo' AND
/// priority > 2`), parsed by the shared query language and evaluated in memory with SQL's
/// three-valued logic: a header a message lacks is NULL, so comparing it is unknown, and a
/// message is delivered only when the selector is true.
struct Selector: Sendable {
    let condition: Condition

    /// Selector texts are short: 4 KiB and 16 levels, checked before the text is read further.
    static let limits = QueryLimits(maximumLength: 4_096, maximumDepth: 16, maximumTokens: 512, maximumListItems: 256)

    /// Parses `text`; 5013 for anything but a condition over header names and literals.
    init(_ text: String) throws(ErrorEnvelope) {
        do {
            condition = try QueryParser.condition(text, limits: Self.limits)
        } catch {
            throw MessagingError.invalidSelector(error.message)
        }
        try Self.check(condition)
    }

    /// Whether a message with `headers` is selected, decided within the budget their text earns
    /// (``MatchBudget/init(evaluating:)``): a message that would need more is not.
    func selects(_ headers: JSONObject) -> Bool {
        var budget = MatchBudget(evaluating: headers)
        return selects(headers, within: &budget)
    }

    /// Whether a message with `headers` is selected, decided within `budget`.
    func selects(_ headers: JSONObject, within budget: inout MatchBudget) -> Bool {
        Self.evaluate(condition, headers, &budget) == true && !budget.isExhausted
    }

    // MARK: Checking

    private static func check(_ condition: Condition) throws(ErrorEnvelope) {
        switch condition {
        case .and(let items), .or(let items): for item in items { try check(item) }
        case .not(let inner): try check(inner)
        case .comparison(let left, _, let right):
            try check(left)
            try check(right)
        case .like(let value, let pattern, _):
            try check(value)
            try check(pattern)
        case .membership(let value, let items, _):
            try check(value)
            for item in items { try check(item) }
        case .nullCheck(let value, _): try check(value)
        case .between(let value, let low, let high, _):
            try check(value)
            try check(low)
            try check(high)
        case .containsAll: throw MessagingError.invalidSelector("'all' does not apply to headers")
        case .constant: break
        }
    }

    private static func check(_ value: ValueExpression) throws(ErrorEnvelope) {
        switch value {
        case .property(let path) where path.column != nil: break
        case .property(let path): throw MessagingError.invalidSelector("'\(path)' is not a header name")
        case .string, .integer, .number, .boolean, .null: break
        case .negated(let inner) where inner.numericLiteral != nil: break
        default: throw MessagingError.invalidSelector("Selectors compare headers with literal values only")
        }
    }

    // MARK: Evaluating

    /// A value in a comparison: text, a number or a boolean; nil is SQL's NULL.
    private enum Scalar: Equatable {
        case text(String), number(Double), boolean(Bool)
    }

    /// True, false, or nil for unknown.
    private static func evaluate(_ condition: Condition, _ headers: JSONObject, _ budget: inout MatchBudget) -> Bool? {
        switch condition {
        case .and(let items): return ThreeValuedLogic.all(items) { evaluate($0, headers, &budget) }
        case .or(let items): return ThreeValuedLogic.any(items) { evaluate($0, headers, &budget) }
        case .not(let inner): return evaluate(inner, headers, &budget).map { !$0 }
        case .comparison(let left, let op, let right):
            // `x = null` means IS NULL, as in where clauses.
            if right == .null || left == .null {
                let other = right == .null ? left : right
                let isNull = scalar(other, headers) == nil
                return op == .equal ? isNull : op == .notEqual ? !isNull : nil
            }
            return compare(scalar(left, headers), scalar(right, headers), &budget).map { op.holds(for: $0) }
        case .like(let value, let pattern, let negated):
            guard case .text(let text)? = scalar(value, headers), case .text(let shape)? = scalar(pattern, headers)
            else { return nil }
            // The pattern may be a header: reading it is paid for too.
            guard budget.spend(shape.utf8.count) else { return nil }
            return LikePattern(shape).matches(text, budget: &budget).map { $0 != negated }
        case .membership(let value, let items, let negated):
            // `x IN (a, b)` is `x = a OR x = b`.
            let subject = scalar(value, headers)
            let found = ThreeValuedLogic.any(items) { compare(subject, scalar($0, headers), &budget).map { $0 == 0 } }
            return negated ? found.map { !$0 } : found
        case .nullCheck(let value, let isNull): return (scalar(value, headers) == nil) == isNull
        case .between(let value, let low, let high, let negated):
            // `x BETWEEN a AND b` is `x >= a AND x <= b`.
            let subject = scalar(value, headers)
            let inside = ThreeValuedLogic.all([(low, ComparisonOperator.greaterOrEqual), (high, .lessOrEqual)]) {
                bound, op in
                compare(subject, scalar(bound, headers), &budget).map { op.holds(for: $0) }
            }
            return negated ? inside.map { !$0 } : inside
        case .containsAll: return nil
        case .constant(let truth): return truth
        }
    }

    private static func scalar(_ value: ValueExpression, _ headers: JSONObject) -> Scalar? {
        switch value {
        case .property(let path):
            guard let name = path.column else { return nil }
            switch headers[name] {
            case .string(let text)?: return .text(text)
            case .integer(let integer)?: return .number(Double(integer))
            case .number(let number)?: return .number(number)
            case .bool(let truth)?: return .boolean(truth)
            default: return nil
            }
        case .string(let text): return .text(text)
        case .boolean(let truth): return .boolean(truth)
        default: return value.numericLiteral.map(Scalar.number)
        }
    }

    /// ``compare(_:_:)``, paying `budget` for the text it may read; nil once it has run out.
    private static func compare(_ left: Scalar?, _ right: Scalar?, _ budget: inout MatchBudget) -> Int? {
        guard budget.spend(textLength(left) + textLength(right)) else { return nil }
        return compare(left, right)
    }

    private static func textLength(_ scalar: Scalar?) -> Int {
        if case .text(let text)? = scalar { return text.utf8.count }
        return 0
    }

    /// -1, 0 or 1; nil when either side is NULL or they cannot be compared. Text that spells a
    /// number compares with a number as a number (headers travel as strings).
    private static func compare(_ left: Scalar?, _ right: Scalar?) -> Int? {
        switch (left, right) {
        case (.text(let a)?, .text(let b)?): return a == b ? 0 : (a.utf8.lexicographicallyPrecedes(b.utf8) ? -1 : 1)
        case (.number(let a)?, .number(let b)?): return a == b ? 0 : (a < b ? -1 : 1)
        case (.boolean(let a)?, .boolean(let b)?): return a == b ? 0 : (!a ? -1 : 1)
        case (.text(let a)?, .number?): return Double(a).flatMap { compare(.number($0), right) }
        case (.number?, .text(let b)?): return Double(b).flatMap { compare(left, .number($0)) }
        default: return nil
        }
    }
}
