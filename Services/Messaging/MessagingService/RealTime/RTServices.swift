import DataEngine
import InternalProtocol
import NIOCore
import ServiceRuntime

/// What real-time connections share: the channel feed, channel rights, the user-token
/// resolution and the settings.
struct RTServices: Sendable {
    let feed: ChannelFeed
    let access: ChannelAccess
    let peers: InternalClient
    let settings: RealTimeSettings
    /// The context calls made for a connection carry (request id, logger).
    let context: CallContext

    /// The channel `options` names, which `identity` may subscribe to (5010, 5016 otherwise).
    func join(_ options: JSONObject, identity: Identity) async throws -> String {
        guard case .string(let name)? = options["channel"] else { throw MessagingError.invalidChannel("") }
        let channel = try ChannelName.validated(name)
        try await access.require(.subscribe, channel: channel, identity: identity)
        return channel
    }

    /// The subtopic and selector `options` name, checked as a REST subscription's are.
    func filter(_ options: JSONObject) throws -> SubscriptionFilter {
        let request = try SubscribeRequest(.object(JSONObject(options.members.filter { ["subtopic", "selector"].contains($0.key) })))
        return try SubscriptionFilter(subtopic: request.subtopic, selector: request.selector)
    }

    /// `identity` as the user `token` names, or as no user for `null` (3064 for a token that
    /// names no live session).
    func identity(_ identity: Identity, token: JSONValue?) async throws -> Identity {
        guard let token = ResolveUserToken.presented(token?.string) else {
            return .anonymous(appId: identity.appId, keyKind: identity.keyKind)
        }
        var call = context
        call.identity = identity
        call.deadline = NIODeadline.now() + TimeAmount.seconds(10)
        let session = try await peers.call(ResolveUserToken.self, .init(appId: identity.appId, token: token), on: .users, context: call)
        return identity.authenticated(as: session)
    }
}

/// The real-time protocol's own refusals, as `SUB_RES` / `MET_RES` errors.
enum RTError {
    static func unknownSubscription(_ name: String) -> ErrorEnvelope {
        ErrorEnvelope(code: 5020, message: "Unknown subscription type '\(name)'", status: 400)
    }

    static func unknownMethod(_ name: String) -> ErrorEnvelope {
        ErrorEnvelope(code: 5021, message: "Unknown method '\(name)'", status: 400)
    }

    static func tooManySubscriptions(_ limit: Int) -> ErrorEnvelope {
        ErrorEnvelope(code: 5022, message: "A connection may hold at most \(limit) subscriptions", status: 400)
    }
}
