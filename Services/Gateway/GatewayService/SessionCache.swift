import InternalProtocol
import PostgresSupport

/// Briefly remembers which user a session token resolved to, so that a busy client does not
/// cost a users-service call per request. Entries are trusted only while the listener is
/// subscribed to the sessions channel: every logout, disable, password or role change is
/// announced there and drops the user's entries on every gateway. Bounded: when full it starts
/// over, which costs a round of lookups and never grows memory.
actor SessionCache: NotificationListener.Consumer {
    struct Key: Hashable {
        let appID: String
        let token: String
    }

    private struct Entry {
        let session: ResolveUserToken.Response
        let expires: ContinuousClock.Instant
    }

    private var entries: [Key: Entry] = [:]
    private var keysByUser: [String: Set<Key>] = [:]
    /// Bumped by every invalidation, so a resolution begun before one is not kept.
    private(set) var generation = 0
    private(set) var isListening = false
    private let lifetime: Duration
    private let capacity: Int

    init(lifetime: Duration, capacity: Int = 100_000) {
        self.lifetime = lifetime
        self.capacity = capacity
    }

    /// The cached resolution of `key`, if fresh and trustworthy.
    func lookup(_ key: Key) -> ResolveUserToken.Response? {
        guard isListening, let entry = entries[key] else { return nil }
        guard entry.expires > .now else {
            drop(key, user: entry.session.userId)
            return nil
        }
        return entry.session
    }

    /// Keeps `session` for `key` unless an invalidation arrived since `startedIn`.
    func store(_ session: ResolveUserToken.Response, for key: Key, startedIn: Int) {
        guard isListening, startedIn == generation, lifetime > .zero else { return }
        if entries.count >= capacity { invalidateAll() }
        entries[key] = Entry(session: session, expires: .now + lifetime)
        keysByUser[Self.user(key.appID, session.userId), default: []].insert(key)
    }

    /// Drops every entry of the user.
    func invalidate(appID: String, userID: String) {
        generation += 1
        for key in keysByUser.removeValue(forKey: Self.user(appID, userID)) ?? [] { entries[key] = nil }
    }

    func setListening(_ listening: Bool) {
        isListening = listening
        invalidateAll()
    }

    /// Reads a ``SessionsChannel`` payload naming one user; anything else drops every entry.
    func receive(_ payload: String) {
        if case (let appID, let userID?)? = SessionsChannel.announced(payload) {
            invalidate(appID: appID, userID: userID)
        } else {
            invalidateAll()
        }
    }

    private func invalidateAll() {
        generation += 1
        entries.removeAll()
        keysByUser.removeAll()
    }

    private func drop(_ key: Key, user userID: String) {
        entries[key] = nil
        keysByUser[Self.user(key.appID, userID)]?.remove(key)
    }

    private static func user(_ appID: String, _ userID: String) -> String {
        SessionsChannel.payload(appID: appID, userID: userID)
    }
}
