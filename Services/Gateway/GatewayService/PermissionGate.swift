import InternalProtocol
import Logging
import Permissions
import PostgresSupport
import ServiceRuntime
import Synchronization

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
    /// The newest version announced per app, kept across reconnections: rules older than it
    /// are never used, since nothing may announce that version again. Under a lock of its own,
    /// so that every request reads it (``version(of:)``) without waiting for the gate.
    private let announced = Mutex<[String: Int64]>([:])
    /// Bumped per app by every invalidation, so a lookup begun before one is not kept.
    private var generations: [String: Int] = [:]
    /// Bumped when every entry is dropped.
    private var epoch = 0
    private(set) var isListening = false
    private let lookup: Lookup
    private let capacity: Int

    /// Fetches an app's rules (data-service's `permissions.rules`).
    typealias Lookup = @Sendable (_ appID: String, CallContext) async throws -> PermissionRulesLookup.Response

    /// A gate asking data-service through `peers`.
    init(peers: InternalClient, capacity: Int = 10_000) {
        self.init(capacity: capacity) { appID, context in
            try await peers.call(PermissionRulesLookup.self, .init(appId: appID), on: .data, context: context)
        }
    }

    /// A gate fetching rules with `lookup` (tests drive the cache with it).
    init(capacity: Int = 10_000, lookup: @escaping Lookup) {
        self.lookup = lookup
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
        let startedIn = (epoch, generations[appID, default: 0])
        do {
            let answer = try await lookup(appID, context)
            // An instance behind an announced change answers old rules: let data-service decide.
            guard answer.version >= announcedVersion(of: appID) else { return nil }
            if isListening, startedIn == (epoch, generations[appID, default: 0]) {
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
        generations[appID, default: 0] += 1
        entries[appID] = nil
    }

    func setListening(_ listening: Bool) {
        isListening = listening
        epoch += 1
        entries.removeAll()
    }

    /// Reads a ``CatalogChannel`` payload; anything unreadable drops every entry.
    func receive(_ payload: String) {
        let parts = payload.split(separator: " ")
        guard parts.count == 2, let version = Int64(parts[1]) else {
            epoch += 1
            entries.removeAll()
            return
        }
        reached(version, appID: String(parts[0]))
    }

    /// Records that the app's catalog reached `version` (announced, or reported by the answer
    /// of a service that used or made it), dropping older rules.
    func reached(_ version: Int64, appID: String) {
        let forgotten: Bool? = announced.withLock { announced in
            guard version > announced[appID, default: 0] else { return nil }
            // Forgetting versions could let older rules be kept: start afresh instead.
            let full = announced.count >= 4 * capacity
            if full { announced.removeAll() }
            announced[appID] = version
            return full
        }
        guard let forgotten else { return }
        if forgotten {
            epoch += 1
            entries.removeAll()
        }
        generations[appID, default: 0] += 1
        if let entry = entries[appID], entry.version < version { entries[appID] = nil }
    }

    /// The newest catalog version the gateway knows the app reached, which every service
    /// answering its next request must have seen (``CatalogFreshness``).
    nonisolated func version(of appID: String) -> Int64? {
        announced.withLock { $0[appID] }
    }

    private func announcedVersion(of appID: String) -> Int64 {
        announced.withLock { $0[appID, default: 0] }
    }
}

/// A public data request as the permission model sees it: its table and the one operation its
/// route declares in data-service's manifest.
struct DataRequest: Equatable {
    let table: String
    let operation: DataOperation
}
