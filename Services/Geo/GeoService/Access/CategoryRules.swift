import InternalProtocol
import Permissions
import PostgresSupport

/// What a caller may do with the points of a geo category (contract §4's model): FIND them in
/// searches, ADD points to it, REMOVE points from it.
enum GeoOperation: String, PermissionOperation, CaseIterable {
    case find = "FIND"
    case add = "ADD"
    case remove = "REMOVE"
}

/// The permission cells of one app's geo categories, as far as a decision needs them.
/// Categories are containers and points their assets (with no ACL of their own): the nine layers
/// of ``PermissionOracle`` decide, with the point's owner for the owner-policy layer and the
/// matrix of category `*` as the global layer. Category names are matched ignoring case here,
/// as the oracle matches containers.
struct CategoryRules: Sendable, Equatable {
    var rules = ContainerPermissions<GeoOperation>()

    /// Whether no cell is set: everything is allowed.
    var isEmpty: Bool { rules.isEmpty }

    /// Whether `caller` may perform `operation` on a point in `category` owned by `ownerID`.
    func allows(_ caller: PermissionCaller, _ operation: GeoOperation, category: String, ownerID: String?) -> Bool {
        rules.allows(caller, operation, container: category, ownerID: ownerID)
    }

    /// Whether `caller` may perform `operation` on a point in at least one of `categories`.
    func allowsAny(_ caller: PermissionCaller, _ operation: GeoOperation, categories: [String], ownerID: String?)
        -> Bool
    {
        categories.contains { allows(caller, operation, category: $0, ownerID: ownerID) }
    }

    /// Of `categories`, those whose points `caller` may find when someone else (or no one) owns
    /// them, and those where the caller may find their own points: the owner-policy layer can
    /// widen or narrow the second.
    func findable(by caller: PermissionCaller, in categories: [String]) -> (others: [String], own: [String]) {
        let others = categories.filter { allows(caller, .find, category: $0, ownerID: nil) }
        guard let user = caller.userID else { return (others, []) }
        return (others, categories.filter { allows(caller, .find, category: $0, ownerID: user) })
    }
}

/// Each app's category cells, kept while listening for changes (`geo_category_rules`).
typealias CategoryRulesCache = AnnouncedAppCache<CategoryRules>
