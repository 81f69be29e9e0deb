import InternalProtocol
import Permissions
import PostgresSupport

/// Category permissions applied to geo requests: searches see only the categories (or, under
/// an owner policy, the caller's own points in them) the caller may find; writes need ADD on
/// the categories a point joins and REMOVE on those it leaves.
struct GeoAccess: Sendable {
    /// Each app's category permission cells.
    let rules: CategoryRulesCache

    /// The search narrowed to what `identity` may find; 4000 when it could find nothing.
    func findable(_ search: GeoSearch, identity: Identity) async throws -> GeoSearch {
        let rules = try await rules.value(app: identity.appId)
        guard !rules.isEmpty else { return search }
        let (others, own) = rules.findable(by: PermissionCaller(identity), in: search.categories)
        guard !others.isEmpty || !own.isEmpty else {
            throw GeoError.noPermission("find points", category: search.categories.joined(separator: ","))
        }
        var narrowed = search
        narrowed.categories = others
        if let user = identity.userId, own != others {
            narrowed.ownCategories = OwnCategories(owner: user, categories: own)
        }
        return narrowed
    }

    /// 4008, as if it did not exist, unless `identity` may find the point (in one of its categories).
    func requireFind(_ point: GeoStore.PointAccess, identity: Identity) async throws {
        let rules = try await rules.value(app: identity.appId)
        guard rules.allowsAny(PermissionCaller(identity), .find, categories: point.categories, ownerID: point.ownerID)
        else {
            throw GeoError.pointNotFound(point.id)
        }
    }

    /// 4000 unless `identity` may add a point owned by `ownerID` to each of `added` and remove
    /// it from each of `removed`.
    func requireChange(added: [String], removed: [String], ownerID: String?, identity: Identity) async throws {
        guard !added.isEmpty || !removed.isEmpty else { return }
        let rules = try await rules.value(app: identity.appId)
        let caller = PermissionCaller(identity)
        for (operation, categories) in [(GeoOperation.add, added), (.remove, removed)] {
            for category in categories where !rules.allows(caller, operation, category: category, ownerID: ownerID) {
                throw GeoError.noPermission(operation == .add ? "add points" : "remove points", category: category)
            }
        }
    }
}

/// The categories where a search finds the points `owner` owns, when they differ from those
/// where it finds everyone else's.
struct OwnCategories: Sendable, Equatable {
    let owner: String
    let categories: [String]
}
