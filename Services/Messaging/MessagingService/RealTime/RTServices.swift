import DataEngine
import InternalProtocol
import Logging
import NIOCore
import Permissions
import QueryLanguage
import ServiceRuntime

/// What real-time connections share: the channel and data feeds, the change log (for resume
/// points), channel rights, the data engine (tables, clauses and read rights of data
/// subscriptions), the user-token resolution and the settings.
struct RTServices: Sendable {
    let feed: ChannelFeed
    let data: DataFeed
    let engine: DataEngine
    let commands: CommandFeed
    let log: ChangeLog
    let access: ChannelAccess
    let peers: InternalClient
    let settings: RealTimeSettings
    /// The context calls made for a connection carry (request id, logger).
    let context: CallContext
    /// Where file URLs start (`BAAS_FILES_PUBLIC_URL`), before a connection's own prefix.
    let filesPublicURL: String

    /// How a connection to `identity`'s app with `apiKey` receives `FILE_REF` values.
    func fileLinks(_ identity: Identity, apiKey: String?) -> SubscriberFileLinks {
        SubscriberFileLinks(publicURL: filesPublicURL, appId: identity.appId, apiKey: apiKey)
    }

    /// The channel `options` names, which `identity` may subscribe to (5010, 5016 otherwise).
    func join(_ options: JSONObject, identity: Identity) async throws -> String {
        guard case .string(let name)? = options["channel"] else { throw MessagingError.invalidChannel("") }
        let channel = try ChannelName.validated(name)
        try await access.require(.subscribe, channel: channel, identity: identity)
        return channel
    }

    /// The subtopic and selector `options` name, checked as a REST subscription's are.
    func filter(_ options: JSONObject) throws -> SubscriptionFilter {
        let request = try SubscribeRequest(
            .object(JSONObject(options.members.filter { ["subtopic", "selector"].contains($0.key) })))
        return try SubscriptionFilter(subtopic: request.subtopic, selector: request.selector)
    }

    /// The `OBJECTS_CHANGES` subscription `options` ask for: `event`, `tableName` and an optional
    /// `whereClause` (5023 for missing or unknown ones, 1009 for an unknown table, 1017–1019 for
    /// a clause that does not compile, 1023 when `identity` may read no object of the table).
    func dataSubscription(
        id: String, _ options: JSONObject, identity: Identity, fileLinks: SubscriberFileLinks, outbox: RTOutbox,
        namespace: String
    ) async throws -> (DataFeed.Key, DataFeed.Subscription) {
        guard let name = options["event"]?.string, let kind = ChangeEvent.Kind(rawValue: name) else {
            throw RTError.invalidOptions(
                "'event' must be one of \(ChangeEvent.Kind.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        guard let tableName = options["tableName"]?.string, !tableName.isEmpty else {
            throw RTError.invalidOptions("'tableName' is required")
        }
        let whereText = options["whereClause"].flatMap { $0 == .null ? nil : $0 }
        guard whereText == nil || whereText?.string != nil else {
            throw RTError.invalidOptions("'whereClause' must be a string")
        }
        let (table, predicate) = try await engine.changeFilter(
            app: identity.appId, table: tableName, whereClause: whereText?.string)
        if try await engine.readAccess(identity, table: table).constant == false {
            throw DataError.permissionDenied(DataOperation.find.rawValue, table: table)
        }
        let clause = try whereText?.string.flatMap { text in
            text.allSatisfy(\.isWhitespace)
                ? nil : try DataError.parsing { () throws(QueryLanguageError) in try QueryParser.condition(text) }.text
        }
        let subscription = DataFeed.Subscription(
            id: id, kind: kind, predicate: predicate, whereClause: clause, identity: identity, outbox: outbox,
            namespace: namespace,
            fileLinks: fileLinks)
        return (DataFeed.Key(app: identity.appId, table: table), subscription)
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
        let session = try await peers.call(
            ResolveUserToken.self, .init(appId: identity.appId, token: token), on: .users, context: call)
        return identity.authenticated(as: session)
    }

    /// `identity` as its session stands now (3064 from users-service: as no user). When the
    /// session cannot be looked up the identity loses its user too: a revocation must not wait
    /// for users-service.
    func identity(_ identity: Identity, session sessionID: String) async -> Identity {
        let anonymous = Identity.anonymous(appId: identity.appId, keyKind: identity.keyKind)
        var call = context
        call.identity = identity
        call.deadline = NIODeadline.now() + TimeAmount.seconds(10)
        do {
            let session = try await peers.call(
                ResolveSession.self, .init(appId: identity.appId, sessionId: sessionID), on: .users, context: call)
            return anonymous.authenticated(as: session)
        } catch let error as ErrorEnvelope where error.code == ErrorEnvelope.invalidUserToken.code {
            return anonymous
        } catch {
            context.logger.warning(
                "real-time session not looked up again: acting as no user",
                metadata: ["error": "\(String(reflecting: error))"])
            return anonymous
        }
    }

    /// Why `identity` may no longer hold `subscribed`; nil when it may (or its rights cannot be
    /// read: each delivery checks them again).
    func refusal(of subscribed: RTConnection.Subscribed, for identity: Identity) async -> ErrorEnvelope? {
        do {
            switch subscribed.kind {
            case .channel:
                try await access.require(.subscribe, channel: subscribed.source, identity: identity)
            case .data:
                if try await engine.readAccess(identity, table: subscribed.source).constant == false {
                    return DataError.permissionDenied(DataOperation.find.rawValue, table: subscribed.source)
                }
            }
            return nil
        } catch let refusal as ErrorEnvelope {
            return refusal
        } catch {
            return nil
        }
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

    static func invalidOptions(_ detail: String) -> ErrorEnvelope {
        ErrorEnvelope(code: 5023, message: "Invalid subscription options: \(detail)", status: 400)
    }

    /// A long-polling request for a session that does not exist here (never, any more, or on
    /// another instance: polling clients must reach the instance they started on).
    static let unknownSession = ErrorEnvelope(code: 5024, message: "Session ID unknown", status: 400)

    /// A real-time request that names no transport this endpoint speaks.
    static let badTransport = ErrorEnvelope(
        code: 5025,
        message: "Use EIO=3 or EIO=4 with transport=polling (or a WebSocket upgrade with transport=websocket)",
        status: 400)

    /// A command whose announcement would not fit PostgreSQL's.
    static func commandTooLarge(_ limit: Int) -> ErrorEnvelope {
        ErrorEnvelope(code: 5028, message: "A channel command may take at most \(limit) bytes", status: 400)
    }

    /// This instance keeps as many long-polling sessions as it may.
    static let tooManySessions = ErrorEnvelope(
        code: 5027, message: "Too many real-time sessions: try again later", status: 503)

    /// A POSTed body that is not an Engine.IO payload.
    static let badPayload = ErrorEnvelope(code: 5026, message: "Not an Engine.IO polling payload", status: 400)
}
