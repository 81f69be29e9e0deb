/// SQL's three-valued logic for conditions evaluated in memory (message selectors, real-time
/// where clauses): `nil` is unknown, and only a true condition selects.
public enum ThreeValuedLogic {
    /// `AND` over `items`: false if any is false, else unknown if any is unknown, else true.
    public static func all<Items: Sequence>(_ items: Items, _ truth: (Items.Element) -> Bool?) -> Bool? {
        var result: Bool? = true
        for item in items {
            switch truth(item) {
            case false?: return false
            case nil: result = nil
            case true?: break
            }
        }
        return result
    }

    /// `OR` over `items`: true if any is true, else unknown if any is unknown, else false.
    public static func any<Items: Sequence>(_ items: Items, _ truth: (Items.Element) -> Bool?) -> Bool? {
        var result: Bool? = false
        for item in items {
            switch truth(item) {
            case true?: return true
            case nil: result = nil
            case false?: break
            }
        }
        return result
    }
}

extension ComparisonOperator {
    /// Whether the operator holds between two values that order as `order`.
    public func holds(for order: Int) -> Bool {
        switch self {
        case .equal: order == 0
        case .notEqual: order != 0
        case .less: order < 0
        case .lessOrEqual: order <= 0
        case .greater: order > 0
        case .greaterOrEqual: order >= 0
        }
    }
}

/// A `LIKE` pattern as PostgreSQL reads it: `%` any run of characters, `_` one, `\` escapes the
/// next. Characters are Unicode scalars, as the database's are.
public struct LikePattern: Sendable {
    private enum Piece: Sendable { case literal(Unicode.Scalar), one, any }
    private let pieces: [Piece]

    /// Reads `pattern`.
    public init(_ pattern: String) {
        var pieces: [Piece] = []
        var escaped = false
        for scalar in pattern.unicodeScalars {
            if escaped {
                pieces.append(.literal(scalar))
                escaped = false
            } else if scalar == "\\" {
                escaped = true
            } else {
                pieces.append(scalar == "%" ? .any : scalar == "_" ? .one : .literal(scalar))
            }
        }
        self.pieces = pieces
    }

    /// Whether all of `text` matches; linear in the text's length times the pattern's.
    public func matches(_ text: String) -> Bool {
        let scalars = Array(text.unicodeScalars)
        // Positions in the text reachable after each prefix of the pattern.
        var reachable = Set([0])
        for piece in pieces {
            var next = Set<Int>()
            switch piece {
            case .any:
                if let first = reachable.min() { next = Set(first...scalars.count) }
            case .one:
                for position in reachable where position < scalars.count { next.insert(position + 1) }
            case .literal(let scalar):
                for position in reachable where position < scalars.count && scalars[position] == scalar { next.insert(position + 1) }
            }
            reachable = next
            if reachable.isEmpty { return false }
        }
        return reachable.contains(scalars.count)
    }
}
