/// SQL's three-valued logic for conditions evaluated in memory (message selectors, real-time
/// where clauses): `nil` is unknown, and only a true condition selects.
package enum ThreeValuedLogic {
    /// `AND` over `items`: false if any is false, else unknown if any is unknown, else true.
    package static func all<Items: Sequence>(_ items: Items, _ truth: (Items.Element) -> Bool?) -> Bool? {
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
    package static func any<Items: Sequence>(_ items: Items, _ truth: (Items.Element) -> Bool?) -> Bool? {
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
    package func holds(for order: Int) -> Bool {
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
