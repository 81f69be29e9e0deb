import InternalProtocol

/// Bounds resizing: at most `running` at once, at most `waiting` queued behind them; a caller
/// beyond both is refused at once (6042) rather than queued without end.
actor ResizeGate {
    private let running: Int
    private let waiting: Int
    private var active = 0
    private var queue: [CheckedContinuation<Void, Never>] = []

    init(running: Int, waiting: Int) {
        self.running = running
        self.waiting = waiting
    }

    /// Runs `work` once a place is free.
    func run<Result: Sendable>(_ work: @Sendable () async throws -> Result) async throws -> Result {
        try await enter()
        defer { leave() }
        return try await work()
    }

    /// How many callers wait for a place.
    var waitingCount: Int { queue.count }

    private func enter() async throws(ErrorEnvelope) {
        if active < running {
            active += 1
            return
        }
        guard queue.count < waiting else { throw ImageError.busy }
        // The place is handed over by `leave`, which keeps `active` counted.
        await withCheckedContinuation { queue.append($0) }
    }

    private func leave() {
        if queue.isEmpty {
            active -= 1
        } else {
            queue.removeFirst().resume()
        }
    }
}
