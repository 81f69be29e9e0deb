import NIOCore
import NIOPosix

/// Ports for servers that must be known before they start (peers' URLs): bind port 0,
/// note the port, close. Another process could take it in between; on loopback in a test
/// run that is rare enough.
public enum FreePort {
    /// A currently free TCP port on 127.0.0.1.
    public static func next() async throws -> Int {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(host: "127.0.0.1", port: 0).get()
        let port = channel.localAddress?.port ?? 0
        try await channel.close()
        return port
    }
}
