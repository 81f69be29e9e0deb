import Foundation
import Hummingbird
import InternalProtocol
import ServiceRuntime

/// `POST /messaging/email`: `{"subject", "bodyparts": {"textmessage", "htmlmessage"}, "to": [..],
/// "cc"?, "bcc"?}`. Sending needs the server-code key: app keys ship inside clients and anyone
/// can become a (guest) user, so anything less would make the relay an open one.
struct EmailRoutes {
    let mailer: Mailer

    func add(to router: inout PublicRoutes) {
        router.add(.post, "messaging/email") { call in
            let identity = call.identity
            guard identity.keyKind == .serverCode else {
                throw ErrorEnvelope(
                    code: 4000, message: "Permission denied: sending email needs the server-code key", status: 403)
            }
            let status = try await mailer.send(try Self.request(call), within: call.context)
            return try .json(status)
        }
    }

    /// The contract's body.
    private struct Body: Decodable {
        struct Parts: Decodable {
            var textmessage: String?
            var htmlmessage: String?
        }
        var subject: String?
        var bodyparts: Parts?
        var to: [String]?
        var cc: [String]?
        var bcc: [String]?
        var attachment: [String]?
    }

    private static func request(_ call: PublicCall) throws -> SendEmail.Request {
        let body: Body
        do {
            body = try JSONDecoder().decode(Body.self, from: Data(call.body.readableBytesView))
        } catch {
            throw MailError.invalid("The body must be {subject, bodyparts: {textmessage, htmlmessage}, to: [addresses]}")
        }
        guard body.attachment?.isEmpty ?? true else { throw MailError.invalid("Attachments are not supported yet") }
        return SendEmail.Request(
            to: body.to ?? [], cc: body.cc ?? [], bcc: body.bcc ?? [], subject: body.subject ?? "",
            text: body.bodyparts?.textmessage, html: body.bodyparts?.htmlmessage)
    }
}
