import DataEngine
import Hummingbird
import InternalProtocol
import NIOCore
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
        routes.socket("rt/socket", options: options) { inbound, outbound, context, query in
            try await serve(inbound, outbound, context: context, query: query)
        }
    }

    /// Runs one connection until the client leaves, falls silent or overflows its queue.
    private func serve(
        _ inbound: SocketInbound<RequestBody>, _ outbound: SocketOutbound, context: PublicRequestContext,
        query: [String: String]
    ) async throws {
        guard query["transport"] == "websocket", let version = query["EIO"].flatMap({ Int($0) }).flatMap(EngineIOVersion.init)
        else {
            return await outbound.close(code: SocketCloseCode.protocolError, reason: "Use EIO=3 or EIO=4 with transport=websocket")
        }
        let outbox = RTOutbox(limit: services.settings.queueLimit)
        var connection = RTConnection(version: version, identity: context.identity, outbox: outbox, services: services)
        let heard = SocketLiveness()
        connection.open()
        let pulse = Task { try await heartbeat(version, outbox: outbox, heard: heard) }
        async let writing: Void = write(outbox, to: outbound)
        while true {
            // A lost stream ends the connection as a close does.
            guard let frame = try? await inbound.next(), frame.kind != .close else { break }
            heard.received()
            guard frame.kind == .text, await connection.receive(String(buffer: frame.payload)) else {
                await outbound.close(code: SocketCloseCode.protocolError, reason: "Not an Engine.IO packet")
                break
            }
        }
        await connection.dropAll()
        outbox.finish()
        pulse.cancel()
        await writing
    }

    /// Sends the outbox's frames as the stream takes them, then closes the socket: with the reason
    /// when the outbox overflowed.
    private func write(_ outbox: RTOutbox, to outbound: SocketOutbound) async {
        for await frame in outbox.frames {
            outbox.taken()
            await outbound.send(.text(frame))
        }
        if outbox.overflowed {
            await outbound.close(code: 1008, reason: "Too slow: more than \(outbox.limit) frames waiting")
        } else {
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
                outbox.finish()
                return
            }
            if version == .v4 { outbox.send(.ping("")) }
        }
    }
}
