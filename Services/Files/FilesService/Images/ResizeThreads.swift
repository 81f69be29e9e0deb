import NIOPosix
import ServiceLifecycle

/// The threads resizes block on: their own, so a long decode never holds up the shared blocking
/// pool that file reads and writes run on. Stopped when the process shuts down.
struct ResizeThreads: Service {
    let pool: NIOThreadPool

    /// `count` started threads.
    init(count: Int) {
        pool = NIOThreadPool(numberOfThreads: count)
        pool.start()
    }

    func run() async throws {
        try? await gracefulShutdown()
        try await pool.shutdownGracefully()
    }
}
