import AsyncHTTPClient
import Foundation
import NIOCore
import NIOWebSocket
import ServiceRuntime
import StreamTestSupport
import TestSupport
import Testing

/// WebSockets through the gateway: upgraded on its public port, relayed frame by frame over one
/// internal stream to the route (declared only by this test target's service) that claims it.
@Suite(.timeLimit(.minutes(20))) struct SocketTests {
    static func withSocket(
        _ cluster: TestCluster,
        _ body: (NIOAsyncChannelInboundStream<WebSocketFrame>, NIOAsyncChannelOutboundWriter<WebSocketFrame>)
            async throws -> Void
    ) async throws {
        let socket = try #require(
            try await WebSocketTestClient.connect(port: cluster.port, path: cluster.prefix() + "/files/echo"))
        try await socket.executeThenClose { inbound, outbound in try await body(inbound, outbound) }
    }

    @Test func tenThousandFramesEchoInOrder() async throws {
        try await StreamingTests.withCluster { cluster, _ async throws in
            try await Self.withSocket(cluster) { inbound, outbound in
                let count = 10_000
                async let sent: Void = {
                    for index in 0..<count {
                        try await outbound.write(WebSocketTestClient.frame(.text, ByteBuffer(string: "\(index)")))
                    }
                }()
                var expected = 0
                for try await frame in inbound where frame.opcode == .text {
                    #expect(String(buffer: frame.data) == "\(expected)")
                    expected += 1
                    if expected == count { break }
                }
                try await sent
                #expect(expected == count)
            }
        }
    }

    @Test func aClientsCloseReachesTheServiceAndComesBack() async throws {
        try await StreamingTests.withCluster { cluster, _ async throws in
            try await Self.withSocket(cluster) { inbound, outbound in
                try await outbound.write(WebSocketTestClient.close(code: 4001))
                let reply = try await Self.close(from: inbound)
                #expect(reply.flatMap(WebSocketTestClient.code(of:)) == 4001)
            }
            #expect(await StreamTestService.closes.all.contains(4001))
        }
    }

    @Test func aServicesCloseReachesTheClient() async throws {
        try await StreamingTests.withCluster { cluster, _ async throws in
            try await Self.withSocket(cluster) { inbound, outbound in
                try await outbound.write(WebSocketTestClient.frame(.text, ByteBuffer(string: "close:4002")))
                let close = try await Self.close(from: inbound)
                #expect(close.flatMap(WebSocketTestClient.code(of:)) == 4002)
                // The gateway may already have closed the connection after relaying the close.
                try? await outbound.write(WebSocketTestClient.close(code: 4002))
            }
        }
    }

    /// The lane's heartbeats keep it, and a socket silent longer than the lane's idle limit, open.
    @Test func heartbeatsKeepASilentSocketOpenPastTheLanesIdleLimit() async throws {
        try await StreamingTests.withCluster(mostlyWaiting: true) { cluster, _ async throws in
            let path = cluster.prefix() + "/files/echo"
            let socket = try #require(try await WebSocketTestClient.connect(port: cluster.port, path: path))
            try await socket.executeThenClose { inbound, outbound in
                try await Task.sleep(for: SocketLaneTiming.idleLimit + .seconds(10))
                try await outbound.write(WebSocketTestClient.frame(.text, ByteBuffer(string: "still here")))
                var frames = inbound.makeAsyncIterator()
                let echo = try await frames.next()
                #expect(echo?.opcode == .text)
                #expect(echo.map { String(buffer: $0.data) } == "still here")
            }
        }
    }

    @Test func aFrameOverTheRoutesLimitClosesWith1009() async throws {
        try await StreamingTests.withCluster { cluster, _ async throws in
            try await Self.withSocket(cluster) { inbound, outbound in
                let large = ByteBuffer(repeating: 7, count: StreamTestService.socketFrameLimit + 1)
                try await outbound.write(WebSocketTestClient.frame(.binary, large))
                let close = try await Self.close(from: inbound)
                #expect(close.flatMap(WebSocketTestClient.code(of:)) == 1009)
            }
        }
    }

    @Test func aThousandSocketsAreOpenAtOnce() async throws {
        try await StreamingTests.withCluster { cluster, _ async throws in
            let path = cluster.prefix() + "/files/echo"
            var sockets: [NIOAsyncChannel<WebSocketFrame, WebSocketFrame>] = []
            for _ in 0..<1_000 {
                sockets.append(try #require(try await WebSocketTestClient.connect(port: cluster.port, path: path)))
            }
            // Every socket answers while all of them are open.
            let answered = try await withThrowingTaskGroup(of: Bool.self) { group in
                for (index, socket) in sockets.enumerated() {
                    group.addTask {
                        try await socket.executeThenClose { inbound, outbound in
                            try await outbound.write(WebSocketTestClient.frame(.text, ByteBuffer(string: "\(index)")))
                            var frames = inbound.makeAsyncIterator()
                            let echo = try await frames.next()
                            try await outbound.write(WebSocketTestClient.close(code: 1000))
                            return echo.map { String(buffer: $0.data) } == "\(index)"
                        }
                    }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(answered == 1_000)
        }
    }

    /// Sockets share a lane to their service: a client that stops reading stalls its own socket
    /// (its window fills, then TCP pushes back on the service's echo), never the lane. While one
    /// client sends 64 MiB and reads nothing, another socket's echo comes back and the first
    /// one's echo is held up; the first then reads every frame, in order. (Its receive buffer is
    /// fixed at 64 KiB: Linux lets a loopback buffer grow to 32 MiB.)
    @Test func aSocketThatStopsReadingHoldsUpNoOther() async throws {
        try await StreamingTests.withCluster { cluster, _ async throws in
            let counter = UUID().uuidString
            let path = cluster.prefix() + "/files/echo"
            let stalled = try #require(
                try await WebSocketTestClient.connect(
                    port: cluster.port, path: path + "?counter=\(counter)", receiveBuffer: 1 << 16))
            let other = try #require(try await WebSocketTestClient.connect(port: cluster.port, path: path))
            let (count, size) = (1_024, 1 << 16)
            try await stalled.executeThenClose { stalledInbound, stalledOutbound in
                let writing = Task {
                    for index in 0..<count {
                        var payload = ByteBuffer(repeating: UInt8(index % 251), count: size)
                        payload.setInteger(UInt32(index), at: 0)
                        try await stalledOutbound.write(WebSocketTestClient.frame(.binary, payload))
                    }
                }
                // Until the stalled socket's echo has stopped for want of credit.
                var (previous, echoed) = (-1, await StreamTestService.echoed.count(counter))
                while echoed == 0 || echoed != previous {
                    try await Task.sleep(for: .milliseconds(500))
                    (previous, echoed) = (echoed, await StreamTestService.echoed.count(counter))
                }
                try await other.executeThenClose { inbound, outbound in
                    try await outbound.write(WebSocketTestClient.frame(.text, ByteBuffer(string: "through")))
                    var frames = inbound.makeAsyncIterator()
                    #expect(try await frames.next().map { String(buffer: $0.data) } == "through")
                    try await outbound.write(WebSocketTestClient.close(code: 1000))
                }
                #expect(
                    await StreamTestService.echoed.count(counter) < count, "nothing held the stalled socket's echo up")
                var expected = 0
                for try await frame in stalledInbound where frame.opcode == .binary {
                    #expect(
                        frame.data.readableBytes == size
                            && frame.data.getInteger(at: 0, as: UInt32.self) == UInt32(expected))
                    expected += 1
                    if expected == count { break }
                }
                try await writing.value
                #expect(expected == count)
            }
        }
    }

    @Test func requestsThatCannotBeSocketsAreJSONErrors() async throws {
        try await StreamingTests.withCluster { cluster, base async throws in
            let plain = try await HTTPTestClient.send(.GET, base + "/files/echo")
            #expect(plain.status == 426)
            #expect(plain.json["code"] as? Int == 426)
            let wrongKey = try await WebSocketTestClient.refusal(
                port: cluster.port, path: "/\(cluster.app.id)/WRONG-KEY/files/echo")
            #expect(wrongKey.status == 401)
            #expect(wrongKey.body.contains(#""code":2002"#), "\(wrongKey.body)")
            let unknown = try await WebSocketTestClient.refusal(
                port: cluster.port, path: cluster.prefix() + "/files/nowhere")
            #expect(unknown.status == 404)
            #expect(unknown.body.contains(#""code":404"#), "\(unknown.body)")
            #expect(
                try await WebSocketTestClient.connect(port: cluster.port, path: cluster.prefix() + "/files/nowhere")
                    == nil)
        }
    }

    /// The first close frame `inbound` delivers, skipping data.
    static func close(from inbound: NIOAsyncChannelInboundStream<WebSocketFrame>) async throws -> WebSocketFrame? {
        for try await frame in inbound where frame.opcode == .connectionClose { return frame }
        return nil
    }
}
