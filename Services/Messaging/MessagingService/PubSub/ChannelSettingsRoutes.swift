import DataAPI
import DataEngine
import Hummingbird
import InternalProtocol
import PostgresSupport
import ServiceRuntime

/// An app's messaging settings and channel permissions, with the server-code key:
/// `GET|PUT messaging/settings` (`{"messageRetention": seconds}`: how long messages published
/// from then on can be polled, 1 s to a week) and the channel cells (``ContainerPermissionRoutes``)
/// under `messaging/channels/{channel}/permissions`, PUBLISH / SUBSCRIBE per user and role,
/// channel `*` the global matrix, channel `email` who may send email with a client key.
struct ChannelSettingsRoutes: Sendable {
    let store: MessageStore
    let rules: ChannelRulesCache

    func add(to routes: inout PublicRoutes) {
        routes.add(.get, "messaging/settings", options: PubSubRoutes.options, doc: .messagingSettings) { call in
            try call.requireServerCode(for: "Messaging settings")
            return .json(Self.settings(retention: try await store.retention(app: call.identity.appId)))
        }
        routes.add(.put, "messaging/settings", options: PubSubRoutes.options, doc: .setMessagingSettings) { call in
            try call.requireServerCode(for: "Messaging settings")
            let retention = try Self.retention(try call.messagingJSON)
            try await store.setRetention(app: call.identity.appId, retention)
            return .json(Self.settings(retention: retention))
        }
        ContainerPermissionRoutes(
            path: "messaging/channels", parameter: "channel", options: PubSubRoutes.options,
            table: ChannelAccess.table(store),
            ownerPolicy: false,
            refusals: .init(
                invalidBody: MessagingError.invalidBody,
                serverCodeRequired: MessagingError.serverCodeRequired("Changing channel permissions")),
            containerName: { name throws(ErrorEnvelope) in try ChannelName.permissionContainer(name) },
            changed: { app in await rules.invalidate(app) }
        ).add(to: &routes)
    }

    private static func settings(retention: Int64) -> JSONValue {
        .object(JSONObject([("messageRetention", .integer(retention / 1000))]))
    }

    /// The body's `messageRetention` in ms (5011 unless whole seconds from 1 s to a week).
    private static func retention(_ body: JSONValue?) throws(ErrorEnvelope) -> Int64 {
        let longest = MessageStore.longestRetention / 1000
        guard case .object(let object)? = body, case .integer(let seconds)? = object["messageRetention"],
            (1...longest).contains(seconds)
        else { throw MessagingError.invalidBody("'messageRetention' must be whole seconds from 1 to \(longest)") }
        return seconds * 1000
    }
}
