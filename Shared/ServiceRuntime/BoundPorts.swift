/// The ports a process's servers actually bound (port 0 picks a free one), for tests and for
/// the start-up banner.
package actor BoundPorts {
    /// Which server.
    package enum Server: Sendable, Hashable {
        /// The internal HTTP/2 server.
        case rpc
        /// The operations server.
        case operations
        /// The gateway's public server.
        case publicAPI
    }

    private var ports: [Server: Int] = [:]
    private var waiters: [Server: [CheckedContinuation<Int?, Never>]] = [:]

    /// Creates an empty record.
    package init() {}

    /// Records that `server` is listening on `port`.
    package func bound(_ server: Server, _ port: Int) {
        ports[server] = port
        for waiter in waiters.removeValue(forKey: server) ?? [] { waiter.resume(returning: port) }
    }

    /// The port `server` listens on, waiting until it has bound; 0 if the wait is cancelled.
    package func port(_ server: Server) async -> Int {
        if let port = ports[server] { return port }
        let port = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Int?, Never>) in
                if Task.isCancelled { return continuation.resume(returning: nil) }
                waiters[server, default: []].append(continuation)
            }
        } onCancel: {
            Task { await self.cancelWaiters(server) }
        }
        return port ?? 0
    }

    private func cancelWaiters(_ server: Server) {
        for waiter in waiters.removeValue(forKey: server) ?? [] { waiter.resume(returning: nil) }
    }
}
