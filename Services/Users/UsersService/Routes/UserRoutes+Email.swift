import DataEngine
import Foundation
import Hummingbird
import InternalProtocol
import NIOCore
import ServiceRuntime

extension UserRoutes {
    /// Password recovery and email confirmation: the API calls, and the pages their links open
    /// (`/{appId}/account/…`, which the gateway serves without an API key).
    func addEmail(to router: inout PublicRoutes) {
        router.add(.get, "users/restorepassword/:identity", doc: .restorePassword) { call in
            try await accounts.restorePassword(
                appID: call.identity.appId, identity: call.parameters["identity"] ?? "",
                clientAddress: call.context.clientAddress, deadline: call.context.deadline, logger: call.context.logger)
            return Response(status: .ok)
        }
        router.add(.post, "users/resendconfirmation/:identity", doc: .resendConfirmation) { call in
            try await accounts.resendConfirmation(
                appID: call.identity.appId, identity: call.parameters["identity"] ?? "",
                clientAddress: call.context.clientAddress, deadline: call.context.deadline, logger: call.context.logger)
            return Response(status: .ok)
        }
        router.add(.get, "account/reset-password/:token", options: .keylessJSON, doc: .resetPasswordPage) { _ in
            .html(AccountPages.resetForm)
        }
        router.add(.post, "account/reset-password/:token", options: .keylessJSON, doc: .resetPassword) { call in
            let userID = try await accounts.resetPassword(
                appID: call.identity.appId, token: call.parameters["token"] ?? "", password: try Self.newPassword(call),
                clientAddress: call.context.clientAddress, logger: call.context.logger)
            return Response.html(AccountPages.passwordChanged).endingSessions(of: userID)
        }
        router.add(.get, "account/confirm-email/:token", options: .keylessJSON, doc: .confirmEmail) { call in
            try await accounts.confirmEmail(
                appID: call.identity.appId, token: call.parameters["token"] ?? "", logger: call.context.logger)
            return .html(AccountPages.emailConfirmed)
        }
    }

    /// The new password from the page's form (`password=…`) or a JSON body.
    private static func newPassword(_ call: PublicCall) throws -> String {
        let bytes = Array(call.body.readableBytesView)
        if let object = try? JSONParser.parse(bytes).object { return object["password"]?.string ?? "" }
        let form = String(decoding: bytes, as: UTF8.self)
        for pair in form.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, parts[0] == "password" else { continue }
            guard let value = PercentEncoding.decode(parts[1], plusAsSpace: true) else {
                throw ErrorEnvelope.badRequest("Malformed form body")
            }
            return value
        }
        return ""
    }
}

/// The small HTML pages of the account links.
enum AccountPages {
    static let resetForm = page(
        "Set a new password",
        """
        <form method="post"><label>New password <input type="password" name="password" required maxlength="72" \
        autocomplete="new-password"></label> <button type="submit">Save</button></form>
        """)
    static let passwordChanged = page(
        "Password changed", "<p>Your password has been changed. You can log in with it now.</p>")
    static let emailConfirmed = page("Email confirmed", "<p>Thank you, your email address is confirmed.</p>")

    private static func page(_ title: String, _ body: String) -> String {
        """
        <!doctype html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">\
        <title>\(title)</title></head><body><h1>\(title)</h1>\(body)</body></html>
        """
    }
}

extension Response {
    /// An HTML page.
    static func html(_ text: String) -> Response {
        Response(
            status: .ok, headers: [.contentType: "text/html; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}

extension UserRoutes {
    /// The app's user settings and email templates (server-code key).
    func addSettings(to router: inout PublicRoutes) {
        router.add(.get, "users/settings", doc: .userSettings) { call in
            .jsonText(try await accounts.settings(identity: call.identity, logger: call.context.logger))
        }
        router.add(.put, "users/settings", doc: .changeUserSettings) { call in
            .jsonText(
                try await accounts.changeSettings(
                    body: Data(call.body.readableBytesView), identity: call.identity, logger: call.context.logger))
        }
        router.add(.get, "users/emailtemplates/:event", doc: .emailTemplate) { call in
            .jsonText(
                try await accounts.emailTemplate(
                    call.parameters["event"] ?? "", identity: call.identity, logger: call.context.logger))
        }
        router.add(.put, "users/emailtemplates/:event", doc: .changeEmailTemplate) { call in
            .jsonText(
                try await accounts.changeEmailTemplate(
                    call.parameters["event"] ?? "", body: Data(call.body.readableBytesView), identity: call.identity,
                    logger: call.context.logger))
        }
    }
}
