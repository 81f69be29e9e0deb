import DataAPI
import DataEngine
import Hummingbird
import InternalProtocol
import ServiceRuntime

/// Push templates: `PUT messaging/pushtemplates/{name}` (``PushTemplate``'s body) and `DELETE …`
/// with the server-code key; `GET messaging/pushtemplates` (every template, by name) and
/// `GET messaging/pushtemplates/{IOS|ANDROID|…}` (those that reach that system) with any key;
/// `POST messaging/push/{name}` with `{"templateValues"?}` publishes one (PUBLISH on its channel).
struct PushTemplateRoutes: Sendable {
    let templates: PushTemplateStore
    let messages: MessageStore
    let access: ChannelAccess

    func add(to routes: inout PublicRoutes) {
        // The router takes one parameter name per position: `:name` is a device type for GET.
        routes.add(
            .put, "messaging/pushtemplates/:name", options: PubSubRoutes.options, doc: .putPushTemplate
        ) { call in
            try call.requireServerCode(for: "Changing push templates")
            let template = try PushTemplate(name: call.parameter("name"), try call.messagingJSON)
            try await templates.put(app: call.identity.appId, template)
            return .json(.object(template.body))
        }
        routes.add(
            .delete, "messaging/pushtemplates/:name", options: PubSubRoutes.options, doc: .deletePushTemplate
        ) { call in
            try call.requireServerCode(for: "Changing push templates")
            let name = call.parameter("name")
            guard try await templates.delete(app: call.identity.appId, name: name) else {
                throw MessagingError.unknownPushTemplate(name)
            }
            return .json(.object(JSONObject([("result", .bool(true))])))
        }
        routes.add(.get, "messaging/pushtemplates", options: PubSubRoutes.options, doc: .pushTemplates) { call in
            .json(Self.map(try await templates.all(app: call.identity.appId)))
        }
        routes.add(
            .get, "messaging/pushtemplates/:name", options: PubSubRoutes.options, doc: .pushTemplatesForDevice
        ) { call in
            let type = call.parameter("name").uppercased()
            guard let os = DeviceRegistration.OS(rawValue: type) else {
                throw MessagingError.invalidBody(
                    "The device type must be IOS, ANDROID, WP or OSX, not '\(type.prefix(32))'")
            }
            return .json(Self.map(try await templates.all(app: call.identity.appId).filter { $0.targets(os) }))
        }
        routes.add(.post, "messaging/push/:name", options: PubSubRoutes.options, doc: .pushFromTemplate) { call in
            let name = call.parameter("name")
            let body = try call.messagingJSON?.object
            let values = try Placeholders.values(
                body?["templateValues"] ?? body?["template-values"], "templateValues",
                refusal: MessagingError.invalidBody)
            guard let template = try await templates.template(app: call.identity.appId, name: name) else {
                throw MessagingError.unknownPushTemplate(name)
            }
            try await access.require(.publish, channel: template.channel, identity: call.identity)
            let publisher = MessageStore.Publisher(userID: call.identity.userId, roles: call.identity.roles)
            let (id, status) = try await messages.publish(
                app: call.identity.appId, channel: template.channel, try template.request(values: values), by: publisher
            )
            return .json(
                .object(JSONObject([("messageId", .string(id)), ("status", .string(status)), ("errorMessage", .null)])))
        }
    }

    private static func map(_ templates: [PushTemplate]) -> JSONValue {
        .object(JSONObject(templates.map { ($0.name, JSONValue.object($0.body)) }))
    }
}
