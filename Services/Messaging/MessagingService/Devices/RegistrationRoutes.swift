import DataAPI
import DataEngine
import Hummingbird
import InternalProtocol
import ServiceRuntime

/// Device registrations (contract §6): `POST messaging/registrations` registers a device on its
/// channels (SUBSCRIBE on each), `GET messaging/registrations/{deviceId}` answers its live
/// registration as the Swift SDK's one-element array, `DELETE …/{deviceId}` removes it; another
/// user's registration is as good as none (``RegistrationStore``).
struct RegistrationRoutes: Sendable {
    let store: RegistrationStore
    let access: ChannelAccess

    func add(to routes: inout PublicRoutes) {
        routes.add(.post, "messaging/registrations", options: PubSubRoutes.options, doc: .registerDevice) { call in
            let now = MessageStore.now()
            let registration = try DeviceRegistration(try call.messagingJSON, now: now)
            for channel in registration.channels {
                try await access.require(.subscribe, channel: channel, identity: call.identity)
            }
            guard
                let id = try await store.register(
                    app: call.identity.appId, registration, by: Self.caller(call), now: now)
            else {
                throw MessagingError.deviceRegisteredByAnother(registration.deviceId)
            }
            return .json(.object(JSONObject([("registrationId", .string(id))])))
        }
        routes.add(
            .get, "messaging/registrations/:deviceId", options: PubSubRoutes.options, doc: .deviceRegistration
        ) { call in
            let deviceId = call.parameter("deviceId")
            guard
                let found = try await store.registration(
                    app: call.identity.appId, deviceId: deviceId, for: Self.caller(call), now: MessageStore.now())
            else {
                throw MessagingError.unknownDevice(deviceId)
            }
            return .json(.array([found.json]))
        }
        routes.add(
            .delete, "messaging/registrations/:deviceId", options: PubSubRoutes.options, doc: .unregisterDevice
        ) { call in
            let deviceId = call.parameter("deviceId")
            guard
                try await store.unregister(
                    app: call.identity.appId, deviceId: deviceId, by: Self.caller(call), now: MessageStore.now())
            else {
                throw MessagingError.unknownDevice(deviceId, cancelling: true)
            }
            return .json(.object(JSONObject([("result", .bool(true))])))
        }
    }

    private static func caller(_ call: PublicCall) -> RegistrationStore.Caller {
        RegistrationStore.Caller(userID: call.identity.userId, isServer: call.identity.keyKind == .serverCode)
    }
}
