import DataEngine
import Foundation
import InternalProtocol
import Logging
import Permissions
import PostgresNIO
import PostgresSupport

/// Channel commands (`MET_REQ PUB_SUB_COMMAND` → `PUB_SUB_COMMANDS` subscribers): short-lived
/// signals such as "typing", not messages — nothing is stored. A command is announced on a
/// PostgreSQL channel, so every instance hears it and hands it to its subscribers on that channel
/// who may SUBSCRIBE to it.
actor CommandFeed: NotificationListener.Consumer {
    /// The PostgreSQL channel commands are announced on.
    static let channel = "messaging_commands"
    /// The largest announcement PostgreSQL carries (8,000 bytes), with room for the envelope.
    static let maximumBytes = 7_000

    /// Commands go to the subscribers of one app's channel, as messages do.
    typealias Key = ChannelFeed.Key

    /// One `PUB_SUB_COMMANDS` subscription.
    struct Subscription: Sendable {
        let id: String
        var identity: Identity
        let outbox: RTOutbox
        let namespace: String
    }

    let database: PostgresClient
    let access: ChannelAccess
    let logger: Logger
    private var book = SubscriptionBook<Key, Subscription>()

    init(database: PostgresClient, access: ChannelAccess, logger: Logger) {
        self.database = database
        self.access = access
        self.logger = logger
    }

    /// Sends a command of `type` with `data` on `key` from `sender` (connection `connection`):
    /// to every subscriber on any instance.
    func send(type: JSONValue, data: JSONValue, on key: Key, from sender: Identity, connection: UUID) async throws {
        let announcement = JSONObject([
            ("app", .string(key.app)), ("channel", .string(key.channel)), ("type", type), ("data", data),
            ("connectionId", .string(connection.uuidString)), ("userId", sender.userId.map(JSONValue.string) ?? .null),
        ])
        let text = JSONValue.object(announcement).jsonText
        guard text.utf8.count <= Self.maximumBytes else { throw RTError.commandTooLarge(Self.maximumBytes) }
        try await database.run("SELECT pg_notify('\(unescaped: Self.channel)', \(text))", logger: logger)
    }

    func add(_ subscription: Subscription, connection: UUID, on key: Key) {
        book.add(subscription, connection: connection, id: subscription.id, on: key)
    }

    func remove(connection: UUID, id: String) {
        book.remove(connection: connection, id: id)
    }

    func removeAll(connection: UUID) {
        _ = book.removeAll(connection: connection)
    }

    func reidentify(connection: UUID, as identity: Identity) {
        book.update(connection: connection) { $0.identity = identity }
    }

    func setListening(_ listening: Bool) async {}

    func receive(_ payload: String) async {
        guard let command = try? JSONParser.parse(payload).object, let app = command["app"]?.string,
            let channel = command["channel"]?.string
        else { return }
        let key = Key(app: app, channel: channel)
        guard book.contains(key) else { return }
        let rules: ContainerPermissions<ChannelOperation>
        do {
            rules = try await access.rules.value(app: app)
        } catch {
            return logger.warning(
                "real-time channel rights not read", metadata: ["error": "\(String(reflecting: error))"])
        }
        let (connectionId, userId) = (command["connectionId"] ?? .null, command["userId"] ?? .null)
        // Swift reads the sender at the top, Android under `userInfo`: both are sent. Encoded once.
        let data = JSONValue.raw(
            JSONValue.object(
                JSONObject([
                    ("type", command["type"] ?? .null), ("data", command["data"] ?? .null),
                    ("connectionId", connectionId), ("userId", userId),
                    ("userInfo", .object(JSONObject([("connectionId", connectionId), ("userId", userId)]))),
                ])
            ).jsonText)
        for subscription in book.subscriptions(of: key)
        where rules.isEmpty || rules.allows(PermissionCaller(subscription.identity), .subscribe, container: channel) {
            subscription.outbox.send(
                SocketIOPacket.event(
                    "SUB_RES", .object(JSONObject([("id", .string(subscription.id)), ("data", data)])),
                    namespace: subscription.namespace))
        }
    }
}
