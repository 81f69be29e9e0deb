import InternalProtocol
import Logging
import Permissions
import PostgresSupport
import ServiceRuntime

/// The gateway's share of the security model: before routing a data request it refuses what
/// the row-independent layers deny for every row (``PermissionPlan/constantDecision``) — a
/// global or table DENY that no object ACL or owner policy of the app could override — with
/// the same 1023 the data service would answer, one hop sooner. Anything the rows may decide
/// is routed. The app's rules come from data-service's `permissions.rules` and are cached while
/// the listener on ``CatalogChannel`` is subscribed (every permission change is announced
/// there); while it is not, nothing is refused here and data-service decides alone.
actor PermissionGate: NotificationListener.Consumer {
    private struct Entry {
        let version: Int64
        let rules: PermissionRules
    }

    private var entries: [String: Entry] = [:]
    /// The newest version announced per app, so a lookup that raced an announcement is not kept.
    private var announced: [String: Int64] = [:]
    /// Bumped by every invalidation, so a lookup begun before one is not kept.
    private var generation = 0
    private(set) var isListening = false
    private let peers: InternalClient
    private let capacity: Int

    init(peers: InternalClient, capacity: Int = 10_000) {
        self.peers = peers
        self.capacity = capacity
    }

    /// Throws 1023 when `identity` may perform the request's data operation on no row.
    func check(_ request: DataRequest, identity: Identity, context: CallContext) async throws {
        guard let rules = await rules(appID: identity.appId, context: context) else { return }
        let plan = PermissionPlan(PermissionCaller(identity), request.operation, container: request.table, rules: rules)
        if plan.constantDecision == .deny {
            throw PermissionError.denied(request.operation.rawValue, table: request.table)
        }
    }

    /// The app's rules, cached; nil when they cannot be trusted or fetched (data-service decides).
    private func rules(appID: String, context: CallContext) async -> PermissionRules? {
        guard isListening else { return nil }
        if let entry = entries[appID] { return entry.rules }
        let startedIn = generation
        do {
            let answer = try await peers.call(PermissionRulesLookup.self, .init(appId: appID), on: .data, context: context)
            if isListening, startedIn == generation, answer.version >= announced[appID, default: 0] {
                if entries.count >= capacity { entries.removeAll() }
                entries[appID] = Entry(version: answer.version, rules: answer.rules)
            }
            return answer.rules
        } catch {
            context.logger.debug("permission rules unavailable; routing", metadata: ["error": "\(error)"])
            return nil
        }
    }

    /// Drops the app's rules at once: the gateway just forwarded a change to them, and the
    /// caller's next request may come before the announcement does.
    func invalidate(appID: String) {
        generation += 1
        entries[appID] = nil
    }

    func setListening(_ listening: Bool) {
        isListening = listening
        generation += 1
        entries.removeAll()
        announced.removeAll()
    }

    /// Reads a ``CatalogChannel`` payload; anything unreadable drops every entry.
    func receive(_ payload: String) {
        let parts = payload.split(separator: " ")
        generation += 1
        guard parts.count == 2, let version = Int64(parts[1]) else {
            entries.removeAll()
            return
        }
        let appID = String(parts[0])
        announced[appID] = max(announced[appID, default: 0], version)
        if let entry = entries[appID], entry.version < version { entries[appID] = nil }
    }
}

/// A public data request as the permission model sees it: its table and operation. Only the
/// routes with one clear operation are named; the rest (saves that may create or update,
/// upserts, schema, permissions, settings, units of work) are left to data-service.
struct DataRequest: Equatable {
    let table: String
    let operation: DataOperation

    /// A request on `table` for `operation`.
    init(table: String, operation: DataOperation) {
        self.table = table
        self.operation = operation
    }

    /// Classifies `method` on `resource` (`data/…` segments after the app prefix).
    init?(method: String, resource: [Substring]) {
        guard resource.first == "data", resource.count >= 2 else { return nil }
        let rest = resource.dropFirst(2).map(String.init)
        let first = String(resource[1])
        if first == "bulk" {
            guard let table = rest.first else { return nil }
            let operations: [String: DataOperation] = ["POST": .create, "PUT": .update, "DELETE": .remove]
            if rest.count == 2, rest[1] == "delete", method == "POST" {
                self.init(table: table, .remove)
            } else if rest.count == 1, let operation = operations[method] {
                self.init(table: table, operation)
            } else {
                return nil
            }
            return
        }
        guard !first.hasPrefix("_"), !["bulkupsert", "data-grouping"].contains(first) else { return nil }
        let queries = ["count", "first", "last", "filter", "find", "bql", "pk"]
        switch (method, rest.count) {
        case ("GET", 0): self.init(table: first, .find)
        case ("POST", 0): self.init(table: first, .create)
        case ("DELETE", 0): self.init(table: first, .remove)
        case (_, 1) where queries.contains(rest[0]): self.init(table: first, .find)
        case (_, 1) where ["properties", "schema", "permissions", "upsert"].contains(rest[0]): return nil
        case ("GET", 1): self.init(table: first, .find)
        case ("PUT", 1): self.init(table: first, .update)
        case ("DELETE", 1): self.init(table: first, .remove)
        default: return nil
        }
    }

    private init?(table: String, _ operation: DataOperation) {
        guard let decoded = PercentEncoding.decode(table), !decoded.isEmpty else { return nil }
        self.init(table: decoded, operation: operation)
    }
}
