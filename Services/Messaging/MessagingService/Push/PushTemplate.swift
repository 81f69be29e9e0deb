import DataEngine
import InternalProtocol

/// A push template (contract §6): a push kept under a name — its channel, message, headers (the
/// `ios-*` / `android-*` content) and targets — that `POST messaging/push/{name}` sends with
/// `{placeholder}`s in the message and header texts filled from `templateValues`.
struct PushTemplate: Sendable {
    let name: String
    /// `{"channel", "message", "headers", "pushBroadcast"?, "pushSinglecast"?, "segmentQuery"?}`.
    let body: JSONObject

    /// The channel it publishes to.
    var channel: String { body["channel"]?.string ?? "default" }

    /// The members a template may have.
    static let members: Set<String> = [
        "channel", "message", "headers", "pushBroadcast", "pushSinglecast", "segmentQuery",
    ]

    /// Reads a template for `name`, checked as the push it will publish; 5011 otherwise (5010
    /// for its channel).
    init(name: String, _ value: JSONValue?) throws(ErrorEnvelope) {
        guard (1...255).contains(name.utf8.count), name != "credentials", !name.contains("/") else {
            throw MessagingError.invalidBody("A push template name is 1 to 255 characters, not 'credentials'")
        }
        guard case .object(var object)? = value else {
            throw MessagingError.invalidBody("A push template is a JSON object")
        }
        if let unknown = object.members.map(\.0).first(where: { !Self.members.contains($0) }) {
            throw MessagingError.invalidBody("A push template has no member '\(unknown.prefix(64))'")
        }
        object["channel"] = .string(try ChannelName.validated(object["channel"]?.string ?? "default"))
        self.name = name
        body = object
        _ = try request(values: [:])
    }

    /// A stored template.
    init(name: String, body: JSONObject) {
        self.name = name
        self.body = body
    }

    /// Whether it may reach devices running `os`.
    func targets(_ os: DeviceRegistration.OS) -> Bool {
        (try? request(values: [:]))?.delivery.targets?.systems.contains(os) ?? false
    }

    /// The push to publish: the texts filled from `values`, the policy PUSH, and the
    /// `template_name` header the Backendless SDKs read.
    func request(values: [String: String]) throws(ErrorEnvelope) -> PublishRequest {
        var object = body
        object["channel"] = nil
        object["publishPolicy"] = .string("PUSH")
        if case .string(let text)? = body["message"] {
            object["message"] = .string(Placeholders.fill(text, values, escape: { $0 }))
        }
        var headers = body["headers"]?.object ?? JSONObject()
        for (header, value) in headers.members {
            if case .string(let text) = value {
                headers[header] = .string(Placeholders.fill(text, values, escape: { $0 }))
            }
        }
        headers["template_name"] = .string(name)
        object["headers"] = .object(headers)
        return try PublishRequest(.object(object))
    }
}
