import Foundation
import Logging
import ServiceLifecycle

/// This process's long-polling sessions by id. A session lives in a task of its own (its HTTP
/// requests come and go); when the process shuts down each is told to close (1001, what it has
/// queued sent first) and given a moment to keep its resume points.
actor PollingSessions: Service {
    private var sessions: [String: (transport: PollingTransport, outbox: RTOutbox, task: Task<Void, Never>)] = [:]
    private var stopping = false

    /// The session `id` of `app`, if it is live here.
    func find(_ id: String, app: String) -> PollingTransport? {
        guard let session = sessions[id], session.transport.app == app else { return nil }
        return session.transport
    }

    /// Runs `session` for `transport` until it returns.
    func start(_ transport: PollingTransport, outbox: RTOutbox, _ session: @escaping @Sendable () async -> Void) {
        let task = Task {
            await session()
            self.ended(transport.id)
        }
        sessions[transport.id] = (transport, outbox, task)
        if stopping { outbox.finish(.goingAway) }
    }

    private func ended(_ id: String) {
        sessions[id] = nil
    }

    /// How many sessions are live.
    var count: Int { sessions.count }

    func run() async throws {
        try? await gracefulShutdown()
        stopping = true
        let live = Array(sessions.values)
        for session in live { session.outbox.finish(.goingAway) }
        for session in live { await session.task.value }
    }
}
