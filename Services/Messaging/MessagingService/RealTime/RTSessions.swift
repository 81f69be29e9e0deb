import Foundation
import ServiceLifecycle
import Synchronization

/// This process's real-time sessions: one timer beats every session's heartbeat, and when the
/// process shuts down each session is told to close (1001, what it has queued sent first) and
/// given a moment to keep its resume points.
final class RTSessions: Service, Sendable {
    private let sessions = Mutex<[UUID: RTSession]>([:])
    private let settings: RealTimeSettings
    /// How long a shutdown waits for sessions to end.
    static let shutdownGrace = Duration.seconds(5)

    init(settings: RealTimeSettings) {
        self.settings = settings
    }

    func add(_ session: RTSession) {
        sessions.withLock { $0[session.id] = session }
        if stopping.load(ordering: .relaxed) { session.outbox.finish(.goingAway) }
    }

    func remove(_ session: RTSession) {
        sessions.withLock { $0[session.id] = nil }
    }

    /// How many sessions are live.
    var count: Int { sessions.withLock { $0.count } }

    private let stopping = Atomic<Bool>(false)

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try? await Task.sleep(for: self.settings.pingInterval)
                guard !Task.isCancelled else { return }
                for session in self.sessions.withLock({ Array($0.values) }) { session.beat(self.settings) }
            }
        }
        stopping.store(true, ordering: .relaxed)
        for session in sessions.withLock({ Array($0.values) }) { session.outbox.finish(.goingAway) }
        let deadline = ContinuousClock.now + Self.shutdownGrace
        while count > 0, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(20)) }
    }
}
