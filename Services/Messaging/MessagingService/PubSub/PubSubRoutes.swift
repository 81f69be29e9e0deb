import DataAPI
import DataEngine
import Hummingbird
import InternalProtocol
import QueryLanguage
import ServiceRuntime

/// Publish/subscribe (contract §6): `POST messaging/{channel}` publishes (or schedules),
/// `GET messaging/{messageId}` answers its status, `DELETE messaging/{messageId}` cancels a
/// scheduled one, `POST messaging/{channel}/subscribe` subscribes (subscriber id, subtopic
/// pattern, selector), `GET messaging/{channel}/{subscriptionId}` polls, `GET
/// messaging/{channel}/properties` describes the channel, `DELETE messaging/channels/{channel}`
/// deletes it (server-code key). A channel named `email` is the email API's path. Publishing
/// and cancelling need PUBLISH on the channel, subscribing and polling SUBSCRIBE.
struct PubSubRoutes: Sendable {
    let store: MessageStore
    let access: ChannelAccess
    let push: PushQueue

    /// A message and its options fit in 1 MiB.
    static let options = RouteOptions(bodyLimit: 1 << 20, transfer: .buffered)

    func add(to routes: inout PublicRoutes) {
        routes.add(.post, "messaging/:channel", options: Self.options, doc: .publishMessage) { call in
            let channel = try ChannelName.validated(call.parameter("channel"))
            let request = try PublishRequest(try call.messagingJSON)
            try await access.require(.publish, channel: channel, identity: call.identity)
            let publisher = MessageStore.Publisher(userID: call.identity.userId, roles: call.identity.roles)
            let (id, status) = try await store.publish(
                app: call.identity.appId, channel: channel, request, by: publisher)
            return .json(Self.status(id: id, status, error: nil))
        }
        routes.add(.delete, "messaging/:channel", options: Self.options, doc: .cancelScheduledMessage) { call in
            let id = call.parameter("channel")
            if let schedule = try await store.scheduled(app: call.identity.appId, id: id) {
                try await access.require(.publish, channel: schedule.channel, identity: call.identity)
                // A schedule's id reaches every subscriber with its first occurrence: a user's
                // schedule is that user's (or the server-code key's) to cancel (second probe, F7).
                if let publisher = schedule.publisher, publisher != call.identity.userId,
                    call.identity.keyKind != .serverCode
                {
                    throw MessagingError.notYourSchedule(id)
                }
            }
            guard try await store.cancel(app: call.identity.appId, id: id) else {
                throw MessagingError.notScheduled(id)
            }
            return .json(.object(JSONObject([("status", .string("cancelled")), ("messageId", .string(id))])))
        }
        // The router takes one parameter name per position: here `:channel` holds a message id.
        routes.add(.get, "messaging/:channel", options: Self.options, doc: .messageStatus) { call in
            let id = call.parameter("channel")
            let found = try await store.status(app: call.identity.appId, id: id)
            var answer = Self.status(id: id, found?.status ?? "unknown", error: found?.error)
            if let pushed = try await push.status(app: call.identity.appId, messageId: id),
                case .object(var object) = answer
            {
                object["pushStatus"] = pushed
                answer = .object(object)
            }
            return .json(answer)
        }
        routes.add(.post, "messaging/:channel/subscribe", options: Self.options, doc: .subscribeToChannel) { call in
            let channel = try ChannelName.validated(call.parameter("channel"))
            let options = try SubscribeRequest(try call.messagingJSON)
            try await access.require(.subscribe, channel: channel, identity: call.identity)
            let id = try await store.subscribe(
                app: call.identity.appId, channel: channel, subscriberId: options.subscriberId,
                subtopic: options.subtopic,
                selector: options.selector)
            return .json(.object(JSONObject([("subscriptionId", .string(id))])))
        }
        routes.add(.get, "messaging/:channel/properties", options: Self.options, doc: .channelProperties) { call in
            let channel = try ChannelName.validated(call.parameter("channel"))
            return .json(.object(JSONObject([("name", .string(channel))])))
        }
        routes.add(.get, "messaging/:channel/:subscriptionId", options: Self.options, doc: .pollSubscription) { call in
            let channel = try ChannelName.validated(call.parameter("channel"))
            let id = call.parameter("subscriptionId")
            try await access.require(.subscribe, channel: channel, identity: call.identity)
            // Batches its filters reject are skipped, so an empty answer means nothing is waiting.
            var filter: SubscriptionFilter?
            while true {
                guard let taken = try await store.take(app: call.identity.appId, channel: channel, id: id) else {
                    throw MessagingError.subscriptionNotFound(id)
                }
                if filter == nil { filter = try SubscriptionFilter(taken) }
                let delivered = filter?.delivered(taken.messages) ?? taken.messages
                guard delivered.isEmpty, !taken.messages.isEmpty else {
                    return .json(.object(JSONObject([("messages", .array(delivered.map(\.json)))])))
                }
            }
        }
        routes.add(.delete, "messaging/channels/:channel", options: Self.options, doc: .deleteChannel) { call in
            try call.requireServerCode(for: "Deleting a channel")
            let channel = try ChannelName.validated(call.parameter("channel"), allowingReserved: true)
            return .json(
                .object(
                    JSONObject([
                        ("result", .bool(try await store.deleteChannel(app: call.identity.appId, channel: channel)))
                    ])))
        }
    }

    /// `{"messageId", "status", "errorMessage"}`.
    private static func status(id: String, _ status: String, error: String?) -> JSONValue {
        .object(
            JSONObject([
                ("messageId", .string(id)), ("status", .string(status)),
                ("errorMessage", error.map(JSONValue.string) ?? .null),
            ]))
    }
}

/// A subscribe body: `{"subscriberId"?, "subtopic"?, "selector"?}` (the 4.x SDK posts its
/// SubscriptionOptions object, other keys included).
struct SubscribeRequest: Sendable {
    let subscriberId: String?
    let subtopic: String?
    let selector: String?

    init(_ body: JSONValue?) throws(ErrorEnvelope) {
        let object: JSONObject
        switch body {
        case nil, .null?: object = JSONObject()
        case .object(let members)?: object = members
        default: throw MessagingError.invalidBody("The body must be a JSON object")
        }
        let limit = Selector.limits.maximumLength
        subscriberId = try MessagingError.optionalText(object["subscriberId"], "subscriberId", upTo: limit)
        subtopic = try MessagingError.optionalText(object["subtopic"], "subtopic", upTo: limit)
        if let subtopic, Subtopic(subtopic, wildcards: true) == nil { throw MessagingError.invalidSubtopic(subtopic) }
        let selectorText = try MessagingError.optionalText(object["selector"], "selector", upTo: limit)
        selector = selectorText.flatMap { $0.allSatisfy(\.isWhitespace) ? nil : $0 }
        if let selector { _ = try Selector(selector) }
    }
}

/// A subscription's stored subtopic pattern and selector, parsed once per poll.
struct SubscriptionFilter: Sendable {
    let pattern: Subtopic?
    let selector: Selector?

    init(_ taken: MessageStore.Taken) throws(ErrorEnvelope) {
        try self.init(subtopic: taken.subtopic, selector: taken.selector)
    }

    /// A filter of a subtopic pattern and a selector (both checked already).
    init(subtopic: String?, selector: String?) throws(ErrorEnvelope) {
        pattern = subtopic.flatMap { Subtopic($0, wildcards: true) }
        self.selector = try selector.map { text throws(ErrorEnvelope) in try Selector(text) }
    }

    /// The messages the pattern and selector let through.
    func delivered(_ messages: [MessageStore.Polled]) -> [MessageStore.Polled] {
        messages.filter(admits)
    }

    /// Whether the pattern and selector let `message` through.
    func admits(_ message: MessageStore.Polled) -> Bool {
        passesPattern(message) && (selector?.selects(message.headers) ?? true)
    }

    /// Whether the subtopic pattern (if any) lets `message` through.
    func passesPattern(_ message: MessageStore.Polled) -> Bool {
        guard let pattern else { return true }
        guard let published = message.subtopic.flatMap({ Subtopic($0, wildcards: false) }) else { return false }
        return pattern.matches(published)
    }
}

extension PublicCall {
    /// The body as JSON; an empty body is nil (5011 when it is not JSON).
    var messagingJSON: JSONValue? {
        get throws(ErrorEnvelope) { try json(maximumDepth: 32, refusal: MessagingError.invalidBody) }
    }
}
