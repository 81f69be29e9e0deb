import DataEngine
import InternalProtocol
import Permissions
import PostgresSupport

/// What a caller may do on a channel (seed S0:2446: channels are containers, a cell applies to
/// every operation of its kind on the channel).
enum ChannelOperation: String, PermissionOperation, CaseIterable {
    case publish = "PUBLISH"
    case subscribe = "SUBSCRIBE"
}

/// Each app's channel cells, kept while listening for changes (`messaging_channel_rules`).
typealias ChannelRulesCache = AnnouncedAppCache<ContainerPermissions<ChannelOperation>>

/// Channel permissions applied to pub/sub requests: the nine layers of ``PermissionOracle``
/// with the channel as container and the channel `*` as the global matrix (channels hold no
/// owned assets, so the owner layer never decides).
struct ChannelAccess: Sendable {
    let rules: ChannelRulesCache

    /// The cells' table, changes announced on `messaging_channel_rules`.
    static func table(_ store: MessageStore) -> ContainerRuleTable<ChannelOperation> {
        ContainerRuleTable(
            database: store.database, logger: store.logger, table: "messaging.channel_permissions",
            containerColumn: "channel",
            channel: "messaging_channel_rules")
    }

    /// Whether the publisher of a schedule may still publish to `channel` of `app`.
    func mayPublish(app: String, channel: String, _ publisher: MessageStore.Publisher) async throws -> Bool {
        let rules = try await rules.value(app: app)
        // The caller is rebuilt from what was kept; the key kind plays no part in the model.
        let caller = PermissionCaller(
            Identity(appId: app, keyKind: .rest, userId: publisher.userID, roles: publisher.roles))
        return rules.isEmpty || rules.allows(caller, .publish, container: channel)
    }

    /// 4000 unless `identity` may send email (`what` names the act): the server-code key always;
    /// any other caller as the app's PUBLISH cells on the ``ChannelName/email`` container (and the
    /// global matrix) decide, granted where none says otherwise, as Backendless does.
    func requireEmail(_ identity: Identity, what: String) async throws {
        guard identity.keyKind != .serverCode else { return }
        let rules = try await rules.value(app: identity.appId)
        guard rules.isEmpty || rules.allows(PermissionCaller(identity), .publish, container: ChannelName.email) else {
            throw ErrorEnvelope(
                code: 4000, message: "Permission denied: \(what) is not allowed to this caller by the app", status: 403)
        }
    }

    /// 5007 (publish) or 5016 (subscribe) unless `identity` may perform `operation` on `channel`.
    func require(_ operation: ChannelOperation, channel: String, identity: Identity) async throws {
        let rules = try await rules.value(app: identity.appId)
        guard rules.isEmpty || rules.allows(PermissionCaller(identity), operation, container: channel) else {
            throw operation == .publish
                ? MessagingError.publishDenied(channel) : MessagingError.subscribeDenied(channel)
        }
    }
}
