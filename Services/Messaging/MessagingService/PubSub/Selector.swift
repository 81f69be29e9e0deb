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

    /// Whether a message with `headers` is selected.
    func selects(_ headers: JSONObject) -> Bool {
        Self.evaluate(condition, headers) == true
    }

    // MARK: Checking

    private static func check(_ condition: Condition) throws(ErrorEnvelope) {
        switch condition {
        case .and(let items), .or(let items): for item in items { try check(item) }
        case .not(let inner): try check(inner)
        case .comparison(let left, _, let right): try check(left); try check(right)
        case .like(let value, let pattern, _): try check(value); try check(pattern)
        case .membership(let value, let items, _): try check(value); for item in items { try check(item) }
        case .nullCheck(let value, _): try check(value)
        case .between(let value, let low, let high, _): try check(value); try check(low); try check(high)
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
    private static func evaluate(_ condition: Condition, _ headers: JSONObject) -> Bool? {
        switch condition {
        case .and(let items):
            var result: Bool? = true
            for item in items {
                switch evaluate(item, headers) {
                case false?: return false
                case nil: result = nil
                case true?: break
                }
            }
            return result
        case .or(let items):
            var result: Bool? = false
            for item in items {
                switch evaluate(item, headers) {
                case true?: return true
                case nil: result = nil
                case false?: break
                }
            }
            return result
        case .not(let inner): return evaluate(inner, headers).map { !$0 }
        case .comparison(let left, let op, let right):
            // `x = null` means IS NULL, as in where clauses.
            if right == .null || left == .null {
                let other = right == .null ? left : right
                let isNull = scalar(other, headers) == nil
                return op == .equal ? isNull : op == .notEqual ? !isNull : nil
            }
            guard let order = compare(scalar(left, headers), scalar(right, headers)) else { return nil }
            switch op {
            case .equal: return order == 0
            case .notEqual: return order != 0
            case .less: return order < 0
            case .lessOrEqual: return order <= 0
            case .greater: return order > 0
            case .greaterOrEqual: return order >= 0
            }
        case .like(let value, let pattern, let negated):
            guard case .text(let text)? = scalar(value, headers), case .text(let shape)? = scalar(pattern, headers) else { return nil }
            return like(Array(text), Array(shape)) != negated
        case .membership(let value, let items, let negated):
            let subject = scalar(value, headers)
            guard subject != nil else { return nil }
            var sawUnknown = false
            for item in items {
                switch compare(subject, scalar(item, headers)) {
                case 0?: return !negated
                case nil: sawUnknown = true
                default: continue
                }
            }
            return sawUnknown ? nil : negated
        case .nullCheck(let value, let isNull): return (scalar(value, headers) == nil) == isNull
        case .between(let value, let low, let high, let negated):
            let subject = scalar(value, headers)
            guard let lower = compare(subject, scalar(low, headers)), let upper = compare(subject, scalar(high, headers)) else {
                return nil
            }
            return (lower >= 0 && upper <= 0) != negated
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

    /// SQL LIKE: `%` any run, `_` one character, `\` escapes the next.
    private static func like(_ text: [Character], _ pattern: [Character]) -> Bool {
        // Positions in the text reachable after each pattern step; linear in text × pattern.
        var reachable = Set([0])
        var index = 0
        while index < pattern.count, !reachable.isEmpty {
            var character = pattern[index]
            var escaped = false
            if character == "\\", index + 1 < pattern.count {
                index += 1
                character = pattern[index]
                escaped = true
            }
            var next = Set<Int>()
            if character == "%" && !escaped {
                let start = reachable.min() ?? 0
                next = Set(start...text.count)
            } else {
                for position in reachable where position < text.count {
                    if (character == "_" && !escaped) || text[position] == character { next.insert(position + 1) }
                }
            }
            reachable = next
            index += 1
        }
        return reachable.contains(text.count)
    }
}
