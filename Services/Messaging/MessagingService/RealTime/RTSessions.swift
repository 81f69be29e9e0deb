import Foundation
import InternalProtocol
import ServiceLifecycle
import Synchronization

/// This process's real-time sessions: one timer beats every session's heartbeat, and when the
/// process shuts down each session is told to close (1001, what it has queued sent first) and
/// given a moment to keep its resume points. The sessions are spread over ``buckets`` beaten in
/// turn, so each is pinged once per interval without all of them being pinged at once (10,000
/// pings and their answers at one instant held up deliveries by most of a second).
final class RTSessions: Service, Sendable {
    /// Parts of the interval the heartbeat is spread over.
    static let buckets = 16
    /// How long a shutdown waits for sessions to end.
    static let shutdownGrace = Duration.seconds(5)

    private struct State {
        var buckets = [[UUID: RTSession]](repeating: [:], count: RTSessions.buckets)
        var bucketOf: [UUID: Int] = [:]
        var added = 0
        /// The app and user each session acts for, so that a change to a user's sessions or
        /// roles reaches that user's sessions (``RTRevocations``).
        var users: [UUID: UserKey] = [:]
    }

    /// The app and (when logged in) user a session acts for.
    struct UserKey: Hashable {
        let app: String
        let user: String?
    }

    private let state = Mutex(State())
    private let stopping = Atomic<Bool>(false)
    private let settings: RealTimeSettings

    init(settings: RealTimeSettings) {
        self.settings = settings
    }

    func add(_ session: RTSession, identity: Identity?) {
        state.withLock { state in
            let bucket = state.added % Self.buckets
            state.added &+= 1
            state.buckets[bucket][session.id] = session
            state.bucketOf[session.id] = bucket
            if let identity { state.users[session.id] = UserKey(app: identity.appId, user: identity.userId) }
        }
        if stopping.load(ordering: .relaxed) { session.outbox.finish(.goingAway) }
    }

    func remove(_ session: RTSession) {
        state.withLock { state in
            state.users[session.id] = nil
            guard let bucket = state.bucketOf.removeValue(forKey: session.id) else { return }
            state.buckets[bucket][session.id] = nil
        }
    }

    /// Records whom a live session acts for now (its user token may have changed).
    func identify(_ session: RTSession, as identity: Identity) {
        let key = UserKey(app: identity.appId, user: identity.userId)
        state.withLock { state in
            guard state.bucketOf[session.id] != nil, state.users[session.id] != key else { return }
            state.users[session.id] = key
        }
    }

    /// The live sessions acting for a user: of `user` in `app`, of any user in `app` when `user`
    /// is nil, of any user at all when `app` is nil too.
    func sessions(ofApp app: String?, user: String?) -> [RTSession] {
        state.withLock { state in
            state.users.compactMap { id, key -> RTSession? in
                guard let keyUser = key.user, app == nil || key.app == app, user == nil || keyUser == user else {
                    return nil
                }
                guard let bucket = state.bucketOf[id] else { return nil }
                return state.buckets[bucket][id]
            }
        }
    }

    /// How many sessions are live.
    var count: Int { state.withLock { $0.bucketOf.count } }

    func run() async throws {
        await cancelWhenGracefulShutdown {
            var bucket = 0
            while !Task.isCancelled {
                try? await Task.sleep(for: self.settings.pingInterval / Self.buckets)
                guard !Task.isCancelled else { return }
                for session in self.state.withLock({ Array($0.buckets[bucket].values) }) { session.beat(self.settings) }
                bucket = (bucket + 1) % Self.buckets
            }
        }
        stopping.store(true, ordering: .relaxed)
        for session in state.withLock({ $0.buckets.flatMap(\.values) }) { session.outbox.finish(.goingAway) }
        let deadline = ContinuousClock.now + Self.shutdownGrace
        while count > 0, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(20)) }
    }
}
