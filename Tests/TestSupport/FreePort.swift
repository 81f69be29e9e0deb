import NIOCore
import NIOPosix

/// Ports for servers that must be known before they start (peers' URLs). Chosen below Linux's
/// ephemeral range (32768 and up), so outgoing connections of the tests cannot take them, and
/// never handed out twice in one test process.
package enum FreePort {
    private actor Ledger {
        var handedOut: Set<Int> = []
        func claim(_ port: Int) -> Bool { handedOut.insert(port).inserted }
    }

    private static let ledger = Ledger()

    /// A currently free TCP port on 127.0.0.1 that this process has not handed out before.
    package static func next() async throws -> Int {
        // Bounded: once every port of the range is handed out or taken, no draw could succeed.
        for _ in 0..<100_000 {
            try Task.checkCancellation()
            let port = Int.random(in: 20_000..<32_000)
            guard await ledger.claim(port) else { continue }
            guard
                let channel = try? await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                    .bind(host: "127.0.0.1", port: port).get()
            else { continue }
            try await channel.close()
            return port
        }
        throw PeerProcess.Failure(description: "no free port left in 20000..<32000")
    }
}
