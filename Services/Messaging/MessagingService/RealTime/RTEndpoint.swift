import DataEngine
import Hummingbird
import InternalProtocol
import NIOCore
import ServiceLifecycle
import ServiceRuntime

/// The real-time endpoint: socket.io clients connect to the gateway at `/{appId}/` (the API key
/// and user token in the query, `EIO=3` or `4`, websocket transport), which resolves the
/// identity and relays the socket here as route `rt/socket`.
struct RTEndpoint: Sendable {
    let services: RTServices

    func add(to routes: inout PublicRoutes) {
        let settings = services.settings
        var options = RouteOptions.socket(maximumFrame: settings.maximumPayload, idleTimeout: settings.silenceLimit * 2)
        options.atAppRoot = true
        // The connection flushes what it has queued before it closes with 1001.
        options.handlesShutdown = true
        routes.socket("rt/socket", options: options) { inbound, outbound, context, query in
            try await serve(inbound, outbound, context: context, query: query)
        }
    }

    /// Runs one connection until the client leaves, falls silent, overflows its queue or the
    /// process shuts down; then keeps where its data subscriptions stood, for a reconnect.
    private func serve(
        _ inbound: SocketInbound<RequestBody>, _ outbound: SocketOutbound, context: PublicRequestContext,
        query: [String: String]
    ) async throws {
        guard query["transport"] == "websocket", let version = query["EIO"].flatMap({ Int($0) }).flatMap(EngineIOVersion.init)
        else {
            return await outbound.close(code: SocketCloseCode.protocolError, reason: "Use EIO=3 or EIO=4 with transport=websocket")
        }
        RTMetrics.connections(by: 1)
        defer { RTMetrics.connections(by: -1) }
        let outbox = RTOutbox(limit: services.settings.queueLimit)
        var connection = RTConnection(
            version: version, identity: context.identity, clientID: query["clientId"].flatMap { $0.isEmpty ? nil : $0 },
            outbox: outbox, services: services)
        let heard = SocketLiveness()
        connection.open()
        let pulse = Task { try await heartbeat(version, outbox: outbox, heard: heard) }
        async let writing: Void = write(outbox, to: outbound)
        await withGracefulShutdownHandler {
            await read(inbound, into: &connection, outbox: outbox, heard: heard)
        } onGracefulShutdown: {
            outbox.finish(.goingAway)
        }
        let standing = await connection.dropAll()
        // A client that closed or was lost receives nothing more; when the server ended the
        // connection (shutdown, overflow, a protocol error, silence) what is queued still goes.
        outbox.finish(.abandoned)
        pulse.cancel()
        await writing
        await connection.keepResumePoints(standing, unsent: outbox.unsent)
    }

    /// Feeds the client's frames to the connection until it closes, is lost, or breaks the protocol.
    private func read(
        _ inbound: SocketInbound<RequestBody>, into connection: inout RTConnection, outbox: RTOutbox, heard: SocketLiveness
    ) async {
        while true {
            await outbox.roomForReplies()
            // A lost stream ends the connection as a close does.
            guard let frame = try? await inbound.next(), frame.kind != .close else { return }
            heard.received()
            guard frame.kind == .text, await connection.receive(String(buffer: frame.payload)) else {
                return outbox.finish(.protocolError)
            }
        }
    }

    /// Sends the outbox's frames as the stream takes them, then closes the socket: with the reason
    /// when the outbox overflowed, with 1001 when the process shuts down.
    private func write(_ outbox: RTOutbox, to outbound: SocketOutbound) async {
        for await frame in outbox.frames {
            var sent = false
            if outbox.ending != .abandoned { sent = await outbound.send(.text(frame.text)) }
            outbox.taken(frame, sent: sent)
        }
        switch outbox.ending {
        case .overflow:
            RTMetrics.slowDisconnect()
            await outbound.close(code: 1008, reason: "Too slow: more than \(outbox.limit) frames waiting")
        case .goingAway:
            await outbound.close(code: SocketCloseCode.goingAway, reason: "Server restarting")
        case .protocolError:
            await outbound.close(code: SocketCloseCode.protocolError, reason: "Not an Engine.IO packet")
        case .open, .normal, .abandoned:
            await outbound.close(code: SocketCloseCode.normal)
        }
    }

    /// Engine.IO 4: the server pings every interval; both: a connection silent for interval and
    /// timeout together is closed.
    private func heartbeat(_ version: EngineIOVersion, outbox: RTOutbox, heard: SocketLiveness) async throws {
        let settings = services.settings
        while true {
            try await Task.sleep(for: settings.pingInterval)
            if heard.sinceReceived > settings.silenceLimit {
                outbox.send(.close)
                outbox.finish(.normal)
                return
            }
            if version == .v4 { outbox.send(.ping("")) }
        }
    }
}
