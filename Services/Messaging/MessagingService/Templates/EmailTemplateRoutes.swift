import DataAPI
import DataEngine
import Hummingbird
import InternalProtocol
import ServiceRuntime

/// Email templates, kept with the server-code key: `PUT emailtemplate/{name}` with
/// `{"subject", "bodyparts": {"textmessage"?, "htmlmessage"?}}`, `GET emailtemplate/{name}`,
/// `GET emailtemplate` (the names), `DELETE emailtemplate/{name}`; and `POST emailtemplate/send`
/// (``TemplateSend``), which a client key may call as the app's email permission decides
/// (``ChannelAccess/requireEmail(_:what:)``), as `POST /messaging/email` does.
struct EmailTemplateRoutes: Sendable {
    let store: EmailTemplateStore
    let mailer: TemplateMailer
    let access: ChannelAccess

    /// A template and its values fit in 1 MiB (two bodies of at most 512 KiB).
    static let options = RouteOptions(bodyLimit: (1 << 20) + 4_096, transfer: .buffered)

    func add(to routes: inout PublicRoutes) {
        routes.add(.post, "emailtemplate/send", options: Self.options, doc: .sendEmailTemplate) { call in
            try await access.requireEmail(call.identity, what: "sending email from a template")
            let request = try TemplateSend(try call.json(maximumDepth: 8, refusal: MailError.invalid))
            return .json(try await mailer.send(request, identity: call.identity, context: call.context))
        }
        routes.add(.put, "emailtemplate/:name", options: Self.options, doc: .putEmailTemplate) { call in
            try call.requireServerCode(for: "Permission denied: using email templates")
            let template = try EmailTemplate(
                name: call.parameter("name"), try call.json(maximumDepth: 8, refusal: MailError.invalid))
            try await store.put(app: call.identity.appId, template)
            return .json(template.json)
        }
        routes.add(.get, "emailtemplate/:name", options: Self.options, doc: .emailTemplate) { call in
            try call.requireServerCode(for: "Permission denied: using email templates")
            let name = call.parameter("name")
            guard let template = try await store.template(app: call.identity.appId, name: name) else {
                throw Self.unknown(name)
            }
            return .json(template.json)
        }
        routes.add(.get, "emailtemplate", options: Self.options, doc: .emailTemplateNames) { call in
            try call.requireServerCode(for: "Permission denied: using email templates")
            return .json(.array(try await store.names(app: call.identity.appId).map(JSONValue.string)))
        }
        routes.add(.delete, "emailtemplate/:name", options: Self.options, doc: .deleteEmailTemplate) { call in
            try call.requireServerCode(for: "Permission denied: using email templates")
            let name = call.parameter("name")
            guard try await store.delete(app: call.identity.appId, name: name) else { throw Self.unknown(name) }
            return .json(.object(JSONObject([("result", .bool(true))])))
        }
    }

    /// 24002 (the contract's code), 404: the template the path or the send names does not exist.
    static func unknown(_ name: String) -> ErrorEnvelope {
        ErrorEnvelope(
            code: 24002, message: "Email Template with name '\(name.prefix(255))' doesn't exist.", status: 404)
    }
}
