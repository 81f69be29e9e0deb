import DataEngine
import Foundation
import InternalProtocol
import Logging
import ServiceRuntime

/// One real-time connection's protocol state (Backendless RT over Socket.IO over Engine.IO,
/// websocket transport): the app's namespace `/{appId}`, the identity it acts for and its
/// subscriptions. It is fed the client's frames one at a time and answers through its outbox.
struct RTConnection: Sendable {
    /// The Engine.IO session id.
    let id: UUID
    let version: EngineIOVersion
    /// `/{appId}`, the namespace every RT client joins.
    let namespace: String
    var identity: Identity
    /// The id the SDK keeps across reconnects (`clientId`), under which resume points are kept.
    let clientID: String?
    /// How it receives `FILE_REF` values: under the API key it connected with.
    let fileLinks: SubscriberFileLinks
    let outbox: RTOutbox
    let services: RTServices
    private(set) var joined = false
    /// The live subscriptions, by id.
    private(set) var subscriptions: [String: Subscribed] = [:]

    /// What a subscription delivers.
    enum Kind: Sendable {
        case channel, data
    }

    /// A live subscription: what it delivers, from which channel or table.
    struct Subscribed: Sendable {
        let kind: Kind
        let source: String
    }

    init(
        id: UUID = UUID(), version: EngineIOVersion, identity: Identity, apiKey: String?, clientID: String?,
        outbox: RTOutbox,
        services: RTServices
    ) {
        self.id = id
        self.version = version
        namespace = "/" + identity.appId
        self.identity = identity
        self.clientID = clientID
        fileLinks = services.fileLinks(identity, apiKey: apiKey)
        self.outbox = outbox
        self.services = services
    }

    /// The Engine.IO open packet (offering `upgrades`: a polling client may move to a
    /// WebSocket), and for revision 3 the default namespace's connect.
    func open(upgrades: [String] = []) {
        let settings = services.settings
        var handshake = JSONObject([
            ("sid", .string(id.uuidString)), ("upgrades", .array(upgrades.map(JSONValue.string))),
            ("pingInterval", .integer(settings.pingInterval.wholeMilliseconds)),
            ("pingTimeout", .integer(settings.pingTimeout.wholeMilliseconds)),
        ])
        if version == .v4 { handshake["maxPayload"] = .integer(Int64(settings.maximumPayload)) }
        outbox.send(.open(JSONValue.object(handshake).jsonText))
        if version == .v3 { outbox.send(SocketIOPacket(kind: .connect, namespace: "/")) }
    }

    /// Handles one text frame; false when the connection must close (the client closed, or
    /// sent what is not Engine.IO / Socket.IO: a parse error ends a socket.io connection).
    mutating func receive(_ text: String) async -> Bool {
        guard let packet = EnginePacket(text) else { return false }
        switch packet {
        case .ping(let data): outbox.send(.pong(data))
        case .pong, .noop, .upgrade: break
        case .close: return false
        case .open: return false
        case .message(let data):
            guard let message = SocketIOPacket(data) else { return false }
            await handle(message)
        }
        return true
    }

    private mutating func handle(_ packet: SocketIOPacket) async {
        switch packet.kind {
        case .connect: connect(packet.namespace)
        case .disconnect:
            guard packet.namespace == namespace else { return }
            joined = false
            _ = await dropAll()
        case .event:
            guard joined, packet.namespace == namespace, case .array(let items)? = packet.data,
                case .string(let name)? = items.first
            else { return }
            let payload = items.count > 1 ? items[1].object ?? JSONObject() : JSONObject()
            await event(name, payload)
        case .ack, .error, .binaryEvent, .binaryAck: break
        }
    }

    private mutating func connect(_ requested: String) {
        if requested == namespace {
            joined = true
            outbox.send(
                SocketIOPacket(
                    kind: .connect, namespace: namespace,
                    data: version == .v4 ? .object(JSONObject([("sid", .string(UUID().uuidString))])) : nil))
        } else if requested == "/" {
            if version == .v4 {
                outbox.send(
                    SocketIOPacket(
                        kind: .connect, namespace: "/", data: .object(JSONObject([("sid", .string(id.uuidString))]))))
            }
        } else {
            let reason = "Invalid namespace: connect to /\(identity.appId)"
            let data: JSONValue = version == .v4 ? .object(JSONObject([("message", .string(reason))])) : .string(reason)
            outbox.send(SocketIOPacket(kind: .error, namespace: requested, data: data))
        }
    }

    private mutating func event(_ name: String, _ payload: JSONObject) async {
        guard case .string(let id)? = payload["id"], !id.isEmpty, id.utf8.count <= 256 else { return }
        let options = payload["options"]?.object ?? JSONObject()
        switch name {
        case "SUB_ON": await subscribe(id: id, type: payload["name"], options: options)
        case "SUB_OFF": await unsubscribe(id)
        case "MET_REQ": await method(id: id, name: payload["name"], options: options)
        default: break
        }
    }

    private mutating func subscribe(id: String, type: JSONValue?, options: JSONObject) async {
        await unsubscribe(id)
        guard subscriptions.count < services.settings.maximumSubscriptions else {
            return reply(id, error: RTError.tooManySubscriptions(services.settings.maximumSubscriptions))
        }
        do {
            switch type {
            case .string("PUB_SUB_CONNECT")?:
                let channel = try await services.join(options, identity: identity)
                added(id, .channel, channel)
                // Swift's SDK counts a join only on this answer.
                outbox.send(event("SUB_RES", id: id, ("data", .string("connected"))))
            case .string("PUB_SUB_MESSAGES")?:
                let subscription = ChannelFeed.Subscription(
                    id: id, identity: identity, filter: try services.filter(options), outbox: outbox,
                    namespace: namespace)
                let channel = try await services.join(options, identity: identity)
                let point: Int64? = if case .message(let number)? = try await resumePoint(id) { number } else { nil }
                try await services.feed.add(
                    subscription, connection: self.id, on: .init(app: identity.appId, channel: channel),
                    resumingAfter: point)
                added(id, .channel, channel)
            case .string("PUB_SUB_COMMANDS")?:
                let channel = try await services.join(options, identity: identity)
                await services.commands.add(
                    CommandFeed.Subscription(id: id, identity: identity, outbox: outbox, namespace: namespace),
                    connection: self.id,
                    on: .init(app: identity.appId, channel: channel))
                added(id, .channel, channel)
            case .string("OBJECTS_CHANGES")?:
                let (key, subscription) = try await services.dataSubscription(
                    id: id, options, identity: identity, fileLinks: fileLinks, outbox: outbox, namespace: namespace)
                let point: ChangePosition? =
                    if case .change(let position)? = try await resumePoint(id) { position } else { nil }
                try await services.data.add(subscription, connection: self.id, on: key, resumingAfter: point)
                added(id, .data, key.table)
            case .string(let other)?:
                throw RTError.unknownSubscription(other)
            default:
                throw RTError.unknownSubscription("")
            }
        } catch let error as ErrorEnvelope {
            reply(id, error: error)
        } catch {
            services.context.logger.error(
                "real-time subscription failed", metadata: ["error": "\(String(reflecting: error))"])
            reply(id, error: .internalError)
        }
    }

    /// Records a live subscription and says it is ready.
    private mutating func added(_ id: String, _ kind: Kind, _ source: String) {
        subscriptions[id] = Subscribed(kind: kind, source: source)
        RTMetrics.subscriptions(data: kind == .data, by: 1)
        outbox.send(event("SUB_READY", id: id))
    }

    private mutating func unsubscribe(_ id: String) async {
        guard let kind = subscriptions.removeValue(forKey: id)?.kind else { return }
        RTMetrics.subscriptions(data: kind == .data, by: -1)
        await services.feed.remove(connection: self.id, id: id)
        await services.data.remove(connection: self.id, id: id)
        await services.commands.remove(connection: self.id, id: id)
    }

    /// Where a subscription of this client stood when an earlier connection closed, taken; nil
    /// without a `clientId` or a live point.
    private func resumePoint(_ subscription: String) async throws -> RTOutbox.Place? {
        guard let clientID else { return nil }
        return try await services.log.takeResumePoint(
            app: identity.appId, client: clientID, subscription: subscription, user: identity.userId)
    }

    /// Ends every subscription (the connection closed or left the namespace): where each stood.
    mutating func dropAll() async -> [(subscription: String, place: RTOutbox.Place)] {
        for subscribed in subscriptions.values { RTMetrics.subscriptions(data: subscribed.kind == .data, by: -1) }
        subscriptions = [:]
        await services.commands.removeAll(connection: id)
        let channels = await services.feed.removeAll(connection: id).map {
            ($0.subscription, RTOutbox.Place.message($0.message))
        }
        let changes = await services.data.removeAll(connection: id).map {
            ($0.subscription, RTOutbox.Place.change($0.position))
        }
        return channels + changes
    }

    /// Keeps where the subscriptions of this closed connection stood (before the first delivery
    /// `unsent` names for each), for a reconnect of the same client within the window.
    func keepResumePoints(_ standing: [(subscription: String, place: RTOutbox.Place)], unsent: [String: RTOutbox.Place])
        async
    {
        guard let clientID, !standing.isEmpty else { return }
        let points = standing.map { point in
            (
                subscription: point.subscription,
                place: unsent[point.subscription].map { min($0.before, point.place) } ?? point.place
            )
        }
        do {
            try await services.log.saveResumePoints(
                app: identity.appId, client: clientID, user: identity.userId, points,
                for: services.settings.resumeWindow)
        } catch {
            services.context.logger.warning(
                "real-time resume points not kept", metadata: ["error": "\(String(reflecting: error))"])
        }
    }

    private mutating func method(id: String, name: JSONValue?, options: JSONObject) async {
        switch name {
        case .string("SET_USER_TOKEN")?:
            do {
                identity = try await services.identity(identity, token: options["userToken"])
                await reidentifyFeeds()
                outbox.send(event("MET_RES", id: id, ("result", .null)))
            } catch let error as ErrorEnvelope {
                methodFailed(id, error)
            } catch {
                methodFailed(id, .internalError)
            }
        case .string("PUB_SUB_COMMAND")?:
            do {
                guard case .string(let name)? = options["channel"] else { throw MessagingError.invalidChannel("") }
                let channel = try ChannelName.validated(name)
                try await services.access.require(.publish, channel: channel, identity: identity)
                try await services.commands.send(
                    type: options["type"] ?? .null, data: options["data"] ?? .null,
                    on: .init(app: identity.appId, channel: channel),
                    from: identity, connection: self.id)
                outbox.send(event("MET_RES", id: id, ("result", .null)))
            } catch let error as ErrorEnvelope {
                methodFailed(id, error)
            } catch {
                methodFailed(id, .internalError)
            }
        default:
            methodFailed(id, RTError.unknownMethod(name?.string ?? ""))
        }
    }

    /// The user's sessions or roles changed: looks the identity up again (losing the user when
    /// the session is over), hands it to every feed, and ends, with the refusal, each
    /// subscription it may no longer hold.
    mutating func reauthorize() async {
        guard let sessionID = identity.sessionId else { return }
        let renewed = await services.identity(identity, session: sessionID)
        guard renewed != identity else { return }
        identity = renewed
        await reidentifyFeeds()
        for (id, subscribed) in subscriptions {
            guard let refusal = await services.refusal(of: subscribed, for: identity) else { continue }
            await unsubscribe(id)
            reply(id, error: refusal)
        }
    }

    private func reidentifyFeeds() async {
        await services.feed.reidentify(connection: id, as: identity)
        await services.data.reidentify(connection: id, as: identity)
        await services.commands.reidentify(connection: id, as: identity)
    }

    /// `MET_RES` with the error's code as a numeric string: the Swift SDK reads it as one.
    private func methodFailed(_ id: String, _ error: ErrorEnvelope) {
        let failure = JSONObject([("code", .string(String(error.code))), ("message", .string(error.message))])
        outbox.send(event("MET_RES", id: id, ("error", .object(failure))))
    }

    private func reply(_ id: String, error: ErrorEnvelope) {
        let failure = JSONObject([("code", .integer(Int64(error.code))), ("message", .string(error.message))])
        outbox.send(event("SUB_RES", id: id, ("error", .object(failure))))
    }

    /// Event `name` about subscription or request `id`: `{"id", members…}`.
    private func event(_ name: String, id: String, _ members: (String, JSONValue)...) -> SocketIOPacket {
        SocketIOPacket.event(name, .object(JSONObject([("id", .string(id))] + members)), namespace: namespace)
    }
}

extension RTOutbox.Place {
    /// The place just before this one: what comes after it includes this one.
    var before: RTOutbox.Place {
        switch self {
        case .change(let position): .change(ChangePosition(commit: position.commit, index: position.index - 1))
        case .message(let number): .message(number - 1)
        }
    }
}
