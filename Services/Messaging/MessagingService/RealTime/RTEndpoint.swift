import DataEngine
import Foundation
import Hummingbird
import InternalProtocol
import NIOCore
import ServiceRuntime

/// The real-time endpoint: socket.io clients connect to the gateway at `/{appId}/` (the API key
/// and user token in the query, `EIO=3` or `4`), which resolves the identity and relays a
/// WebSocket here as route `rt/socket`, or passes long-polling requests as `rt/poll` (GET to
/// receive, POST to send); a polling client may then upgrade to a WebSocket with its `sid`.
/// Sessions are driven by what arrives (``RTSession``): no task waits on an idle one.
struct RTEndpoint: Sendable {
    let services: RTServices
    let polling: PollingSessions
    let live: RTSessions

    func add(to routes: inout PublicRoutes) {
        let settings = services.settings
        var options = RouteOptions.socket(maximumFrame: settings.maximumPayload)
        options.atAppRoot = true
        routes.socket("rt/socket", options: options, doc: .realTimeSocket) { socket, context, query in
            accept(socket, context: context, query: query)
        }
        var pollingOptions = RouteOptions(bodyLimit: settings.maximumPayload, transfer: .buffered)
        pollingOptions.atAppRoot = true
        routes.add(.get, "rt/poll", options: pollingOptions, doc: .realTimePoll) { call in try await poll(call) }
        routes.add(.post, "rt/poll", options: pollingOptions, doc: .realTimePost) { call in try await post(call) }
    }

    // MARK: WebSocket

    private func accept(_ socket: ServedSocket, context: PublicRequestContext, query: [String: String]) {
        guard query["transport"] == "websocket", let version = Self.version(query) else {
            return socket.refuse(
                code: SocketCloseCode.protocolError, reason: "Use EIO=3 or EIO=4 with transport=websocket")
        }
        if let sid = query["sid"] {
            return PollingUpgrade.start(
                sid, on: socket, caller: Self.caller(context.identity, query), sessions: polling)
        }
        let connection = RTConnection(
            version: version, identity: context.identity, apiKey: query["apiKey"], clientID: Self.clientID(query),
            outbox: outbox(to: socket.outbound), services: services)
        let session = RTSession(connection, heard: SocketLiveness(), sessions: live) { await socket.end() }
        socket.receive { frame, done in session.received(RTIncoming(frame), done: done) }
        socket.onShutdown { session.outbox.finish(.goingAway) }
        session.start()
    }

    // MARK: Long-polling

    /// `GET`: the handshake (no `sid`: a new session, answered with its open packet), or a poll
    /// answering what the session sent since the last one.
    private func poll(_ call: PublicCall) async throws -> Response {
        let query = Dictionary(try call.queryItems.map { ($0.name, $0.value) }) { $1 }
        guard query["transport"] == "polling", let version = Self.version(query) else { throw RTError.badTransport }
        let transport: PollingTransport
        if let sid = query["sid"] {
            guard let known = await polling.find(sid, for: Self.caller(call.identity, query)) else {
                throw RTError.unknownSession
            }
            transport = known
        } else {
            guard await polling.count < services.settings.maximumPollingSessions else { throw RTError.tooManySessions }
            transport = await start(
                version: version, identity: call.identity, apiKey: query["apiKey"], clientID: Self.clientID(query))
        }
        // The poll ends before the call's deadline, within the heartbeat.
        let hold = min(
            services.settings.pingInterval, .milliseconds(max(0, call.context.remainingMilliseconds - 2_000)))
        guard let packets = await transport.poll(hold: hold) else { throw RTError.unknownSession }
        let body = PollingPayload.encode(packets.isEmpty ? [EnginePacket.noop.encoded] : packets, version: version)
        return Response(
            status: .ok, headers: [.contentType: "text/plain; charset=UTF-8"],
            body: .init(byteBuffer: ByteBuffer(string: body)))
    }

    /// `POST`: packets from the client to session `sid`.
    private func post(_ call: PublicCall) async throws -> Response {
        let query = Dictionary(try call.queryItems.map { ($0.name, $0.value) }) { $1 }
        guard query["transport"] == "polling", let version = Self.version(query), let sid = query["sid"] else {
            throw RTError.badTransport
        }
        guard let transport = await polling.find(sid, for: Self.caller(call.identity, query)) else {
            throw RTError.unknownSession
        }
        guard let packets = PollingPayload.decode(call.body, version: version) else { throw RTError.badPayload }
        transport.post(packets)
        return Response(
            status: .ok, headers: [.contentType: "text/plain; charset=UTF-8"],
            body: .init(byteBuffer: ByteBuffer(string: "ok")))
    }

    /// A new polling session, live until its client leaves or falls silent (`apiKey`: the key
    /// its query named, which its file URLs carry).
    private func start(version: EngineIOVersion, identity: Identity, apiKey: String?, clientID: String?) async
        -> PollingTransport
    {
        let id = UUID()
        let heard = SocketLiveness()
        let transport = PollingTransport(
            id: id.uuidString, owner: PollingTransport.Owner(identity, apiKey: apiKey), version: version,
            limit: services.settings.queueLimit, heard: heard)
        let connection = RTConnection(
            id: id, version: version, identity: identity, apiKey: apiKey, clientID: clientID,
            outbox: outbox(to: transport),
            services: services)
        let session = RTSession(connection, heard: heard, sessions: live) { [polling] in
            await polling.ended(transport.id)
        }
        transport.deliver(to: session)
        await polling.add(transport)
        session.start(upgrades: ["websocket"])
        return transport
    }

    private func outbox(to writer: some RTWriter) -> RTOutbox {
        RTOutbox(limit: services.settings.queueLimit, writer: writer)
    }

    private static func version(_ query: [String: String]) -> EngineIOVersion? {
        query["EIO"].flatMap { Int($0) }.flatMap(EngineIOVersion.init)
    }

    /// Who a request is, as a polling session's owner would have to be.
    private static func caller(_ identity: Identity, _ query: [String: String]) -> PollingTransport.Owner {
        PollingTransport.Owner(identity, apiKey: query["apiKey"])
    }

    private static func clientID(_ query: [String: String]) -> String? {
        query["clientId"].flatMap { $0.isEmpty ? nil : $0 }
    }
}
