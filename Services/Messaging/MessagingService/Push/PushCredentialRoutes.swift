import DataAPI
import DataEngine
import Hummingbird
import InternalProtocol
import ServiceRuntime

/// Push credentials, with the server-code key: `PUT messaging/push/credentials/apns` with
/// ``APNsCredential``'s body, `PUT messaging/push/credentials/fcm` with a service-account file,
/// `GET messaging/push/credentials` (what is set, never a key), `DELETE messaging/push/credentials/{provider}`.
struct PushCredentialRoutes: Sendable {
    let store: PushCredentialStore

    func add(to routes: inout PublicRoutes) {
        routes.add(
            .put, "messaging/push/credentials/:provider", options: PubSubRoutes.options, doc: .setPushCredential
        ) { call in
            let provider = try Self.provider(call)
            let body = try call.messagingJSON
            switch provider {
            case .apns:
                let credential = try APNsCredential(body)
                try await store.put(app: call.identity.appId, .apns, summary: credential.summary, key: credential.pem)
            case .fcm:
                let credential = try FCMCredential(body)
                try await store.put(app: call.identity.appId, .fcm, summary: credential.summary, key: credential.pem)
            }
            return .json(.object(try await store.summaries(app: call.identity.appId)))
        }
        routes.add(.get, "messaging/push/credentials", options: PubSubRoutes.options, doc: .pushCredentials) { call in
            try call.requireServerCode(for: "Push credentials")
            return .json(.object(try await store.summaries(app: call.identity.appId)))
        }
        routes.add(
            .delete, "messaging/push/credentials/:provider", options: PubSubRoutes.options, doc: .deletePushCredential
        ) { call in
            let provider = try Self.provider(call)
            return .json(
                .object(JSONObject([("result", .bool(try await store.delete(app: call.identity.appId, provider)))])))
        }
    }

    /// The `:provider` (`apns` or `fcm`), after the key check.
    private static func provider(_ call: PublicCall) throws(ErrorEnvelope) -> PushCredentialStore.Provider {
        try call.requireServerCode(for: "Push credentials")
        let name = call.parameter("provider").lowercased()
        guard let provider = PushCredentialStore.Provider(rawValue: name) else {
            throw MessagingError.invalidBody("The push provider must be 'apns' or 'fcm', not '\(name.prefix(32))'")
        }
        return provider
    }
}
