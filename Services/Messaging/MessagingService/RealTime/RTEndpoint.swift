import DataEngine
import Foundation
import Hummingbird
import InternalProtocol
import NIOCore
import ServiceLifecycle
import ServiceRuntime

/// The real-time endpoint: socket.io clients connect to the gateway at `/{appId}/` (the API key
/// and user token in the query, `EIO=3` or `4`), which resolves the identity and relays a
/// WebSocket here as route `rt/socket`, or passes long-polling requests as `rt/poll` (GET to
/// receive, POST to send); a polling client may then upgrade to a WebSocket with its `sid`.
struct RTEndpoint: Sendable {
    let services: RTServices
    let sessions: PollingSessions

    func add(to routes: inout PublicRoutes) {
        let settings = services.settings
        var options = RouteOptions.socket(maximumFrame: settings.maximumPayload)
        options.atAppRoot = true
        // The connection flushes what it has queued before it closes with 1001.
        options.handlesShutdown = true
        routes.socket("rt/socket", options: options) { inbound, outbound, context, query in
            try await serveSocket(inbound, outbound, context: context, query: query)
        }
        var polling = RouteOptions(bodyLimit: settings.maximumPayload, transfer: .buffered)
        polling.atAppRoot = true
        routes.add(.get, "rt/poll", options: polling) { call in try await poll(call) }
        routes.add(.post, "rt/poll", options: polling) { call in try await post(call) }
    }

    // MARK: WebSocket

    private func serveSocket(
        _ inbound: SocketInbound, _ outbound: SocketOutbound, context: PublicRequestContext,
        query: [String: String]
    ) async throws {
        guard query["transport"] == "websocket", let version = Self.version(query) else {
            return await outbound.close(code: SocketCloseCode.protocolError, reason: "Use EIO=3 or EIO=4 with transport=websocket")
        }
        if let sid = query["sid"] {
            return await upgrade(sid, inbound, outbound, app: context.identity.appId)
        }
        var reader = SocketReader(inbound: inbound)
        let connection = RTConnection(version: version, identity: context.identity, clientID: Self.clientID(query), outbox: outbox(), services: services)
        await run(connection, reader: &reader, writer: outbound, heard: SocketLiveness())
    }

    /// Moves polling session `sid` onto this socket (Engine.IO's probe: `2probe`, `3probe`,
    /// then `5`) and feeds it the socket's frames until the client leaves.
    private func upgrade(_ sid: String, _ inbound: SocketInbound, _ outbound: SocketOutbound, app: String) async {
        guard let transport = await sessions.find(sid, app: app) else {
            return await outbound.close(code: SocketCloseCode.protocolError, reason: "Session ID unknown")
        }
        var reader = SocketReader(inbound: inbound)
        guard case .text("2probe") = await reader.next(), await outbound.send("3probe"),
            case .text(EnginePacket.upgrade.encoded) = await reader.next()
        else {
            return await outbound.close(code: SocketCloseCode.protocolError, reason: "Expected the Engine.IO upgrade probe")
        }
        await transport.upgrade(to: outbound)
        while true {
            let incoming = await reader.next()
            transport.received(incoming)
            if case .closed = incoming { break }
        }
        await transport.ended()
    }

    // MARK: Long-polling

    /// `GET`: the handshake (no `sid`: a new session, answered with its open packet), or a poll
    /// answering what the session sent since the last one.
    private func poll(_ call: PublicCall) async throws -> Response {
        let query = Dictionary(try call.queryItems.map { ($0.name, $0.value) }) { $1 }
        guard query["transport"] == "polling", let version = Self.version(query) else { throw RTError.badTransport }
        let transport: PollingTransport
        if let sid = query["sid"] {
            guard let known = await sessions.find(sid, app: call.identity.appId) else { throw RTError.unknownSession }
            transport = known
        } else {
            guard await sessions.count < services.settings.maximumPollingSessions else { throw RTError.tooManySessions }
            transport = await start(version: version, identity: call.identity, clientID: Self.clientID(query))
        }
        // The poll ends before the call's deadline, within the heartbeat.
        let hold = min(services.settings.pingInterval, .milliseconds(max(0, call.context.remainingMilliseconds - 2_000)))
        guard let packets = await transport.poll(hold: hold) else { throw RTError.unknownSession }
        let body = PollingPayload.encode(packets.isEmpty ? [EnginePacket.noop.encoded] : packets, version: version)
        return Response(
            status: .ok, headers: [.contentType: "text/plain; charset=UTF-8"], body: .init(byteBuffer: ByteBuffer(string: body)))
    }

    /// `POST`: packets from the client to session `sid`.
    private func post(_ call: PublicCall) async throws -> Response {
        let query = Dictionary(try call.queryItems.map { ($0.name, $0.value) }) { $1 }
        guard query["transport"] == "polling", let version = Self.version(query), let sid = query["sid"] else { throw RTError.badTransport }
        guard let transport = await sessions.find(sid, app: call.identity.appId) else { throw RTError.unknownSession }
        guard let packets = PollingPayload.decode(call.body, version: version) else { throw RTError.badPayload }
        transport.post(packets)
        return Response(status: .ok, headers: [.contentType: "text/plain; charset=UTF-8"], body: .init(byteBuffer: ByteBuffer(string: "ok")))
    }

    /// A new polling session, running until its client leaves or falls silent.
    private func start(version: EngineIOVersion, identity: Identity, clientID: String?) async -> PollingTransport {
        let id = UUID()
        let heard = SocketLiveness()
        let transport = PollingTransport(
            id: id.uuidString, app: identity.appId, version: version, limit: services.settings.queueLimit, heard: heard)
        let connection = RTConnection(id: id, version: version, identity: identity, clientID: clientID, outbox: outbox(), services: services)
        await sessions.start(transport, outbox: connection.outbox) {
            var reader = PollingReader(transport)
            await run(connection, reader: &reader, writer: transport, heard: heard, upgrades: ["websocket"])
        }
        return transport
    }

    // MARK: One session, whatever carries it

    /// Runs one connection until the client leaves, falls silent, overflows its queue or the
    /// process shuts down; then keeps where its subscriptions stood, for a reconnect.
    private func run<Reader: RTReader>(
        _ connection: RTConnection, reader: inout Reader, writer: some RTWriter, heard: SocketLiveness, upgrades: [String] = []
    ) async {
        RTMetrics.connections(by: 1)
        defer { RTMetrics.connections(by: -1) }
        var connection = connection
        let (outbox, version) = (connection.outbox, connection.version)
        connection.open(upgrades: upgrades)
        let pulse = Task { try await heartbeat(version, outbox: outbox, heard: heard) }
        async let writing: Void = write(outbox, to: writer)
        await withGracefulShutdownHandler {
            await read(&reader, into: &connection, outbox: outbox, heard: heard)
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

    private func outbox() -> RTOutbox {
        RTOutbox(limit: services.settings.queueLimit)
    }

    /// Feeds the client's packets to the connection until it closes, is lost, or breaks the protocol.
    private func read<Reader: RTReader>(
        _ reader: inout Reader, into connection: inout RTConnection, outbox: RTOutbox, heard: SocketLiveness
    ) async {
        while true {
            await outbox.roomForReplies()
            switch await reader.next() {
            case .closed: return
            case .unreadable: return outbox.finish(.protocolError)
            case .text(let text):
                heard.received()
                guard await connection.receive(text) else { return outbox.finish(.protocolError) }
            }
        }
    }

    /// Sends the outbox's frames as the transport takes them, then closes it: with the reason
    /// when the outbox overflowed, with 1001 when the process shuts down.
    private func write(_ outbox: RTOutbox, to writer: some RTWriter) async {
        for await frame in outbox.frames {
            var sent = false
            if outbox.ending != .abandoned { sent = await writer.send(frame.text) }
            outbox.taken(frame, sent: sent)
        }
        switch outbox.ending {
        case .overflow:
            RTMetrics.slowDisconnect()
            await writer.close(code: 1008, reason: "Too slow: more than \(outbox.limit) frames waiting")
        case .goingAway:
            await writer.close(code: SocketCloseCode.goingAway, reason: "Server restarting")
        case .protocolError:
            await writer.close(code: SocketCloseCode.protocolError, reason: "Not an Engine.IO packet")
        case .open, .normal, .abandoned:
            await writer.close(code: SocketCloseCode.normal, reason: "")
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

    private static func version(_ query: [String: String]) -> EngineIOVersion? {
        query["EIO"].flatMap { Int($0) }.flatMap(EngineIOVersion.init)
    }

    private static func clientID(_ query: [String: String]) -> String? {
        query["clientId"].flatMap { $0.isEmpty ? nil : $0 }
    }
}
