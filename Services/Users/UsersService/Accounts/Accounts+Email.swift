import DataEngine
import Foundation
import InternalProtocol
import Logging
import NIOCore
import QueryLanguage

/// How users-service sends its emails (through messaging-service) and where the links in
/// them point: the gateway's public URL.
package struct AccountMail: Sendable {
    /// The gateway's public base URL, e.g. `https://api.example.com`.
    package let publicURL: String
    /// Delivers one email before the deadline.
    package let send: @Sendable (SendEmail.Request, Logger, NIODeadline) async throws -> Void

    /// Creates the mail settings.
    package init(
        publicURL: String, send: @escaping @Sendable (SendEmail.Request, Logger, NIODeadline) async throws -> Void
    ) {
        self.publicURL = publicURL.hasSuffix("/") ? String(publicURL.dropLast()) : publicURL
        self.send = send
    }
}

extension Accounts {
    /// `GET /users/restorepassword/{identity}`: mails the user a single-use link to a page that
    /// sets a new password (3020 for an unknown identity). Rate limited like logins.
    package func restorePassword(
        appID: String, identity value: String, clientAddress: String?, deadline: NIODeadline = .now() + .seconds(30),
        logger: Logger
    ) async throws {
        let (profile, policy) = try await emailRecipient(
            appID: appID, identity: value, clientAddress: clientAddress, logger: logger)
        guard let userID = profile["objectId"]?.string else { throw UserError.unknownIdentity }
        guard let email = profile["email"]?.string, EmailAddress.isValid(email) else { throw UserError.noEmailAddress }
        let mail = try requireMail()
        let template = try await EmailTemplate.load(appID: appID, event: .passwordReset, session: pool(logger))
        guard template.enabled else { throw UserError.recoveryDisabled }
        let token = try await ActionTokens.issue(
            appID: appID, userID: userID, address: email, purpose: .reset,
            expires: now().addingTimeInterval(Double(policy.resetTokenSeconds)), session: pool(logger))
        let values = [
            "link": "\(mail.publicURL)/\(appID)/account/reset-password/\(token)", "email": email, "identity": value,
            "name": profile["name"]?.string ?? email, "minutes": "\(policy.resetTokenSeconds / 60)",
        ]
        try await send(template, values: values, to: email, mail: mail, deadline: deadline, logger: logger)
    }

    /// The reset page's form: sets the password the link's token allows (once, before it
    /// expires, while the user's email is the address it was mailed to), and ends every session
    /// of the user. Returns the user's id. Only a live token costs a bcrypt hash, and attempts
    /// are limited per client address.
    package func resetPassword(
        appID: String, token: String, password: String, clientAddress: String? = nil, logger: Logger
    ) async throws -> String {
        guard !password.isEmpty else { throw UserError.missingPassword }
        guard password.utf8.count <= Self.passwordByteLimit else {
            throw UserError.tooLong("password", limit: Self.passwordByteLimit)
        }
        try await throttle.admit(identity: nil, address: clientAddress)
        try await requireLink(appID: appID, token: token, purpose: .reset, logger: logger)
        let hash = try await hasher.hash(password)
        let moment = now()
        return try await pool(logger).transaction { session in
            // A change of address since the check deleted the token: nothing is consumed then.
            guard
                let holder = try await ActionTokens.consume(
                    appID: appID, token: token, purpose: .reset, now: moment, session: session)
            else { throw UserError.invalidLink }
            try await Credentials.store(appID: appID, userID: holder.userID, hash: hash, session: session)
            try await Sessions.endAll(appID: appID, userID: holder.userID, keeping: nil, session: session)
            return holder.userID
        }
    }

    /// The confirmation link: an EMAIL_CONFIRMATION_PENDING user becomes ENABLED (a user
    /// disabled meanwhile stays disabled). The link works once, before it expires, while the
    /// user's email is the address it was mailed to.
    package func confirmEmail(appID: String, token: String, logger: Logger) async throws {
        try await requireLink(appID: appID, token: token, purpose: .confirm, logger: logger)
        let moment = now()
        try await engine.transaction(identity: Self.system(appID), logger: logger) { transaction in
            guard
                let holder = try await ActionTokens.consume(
                    appID: appID, token: token, purpose: .confirm, now: moment, session: transaction.session)
            else { throw UserError.invalidLink }
            let pending = Condition.and([
                .comparison(.property(PropertyPath(["objectId"])), .equal, .string(holder.userID)),
                .comparison(.property(PropertyPath(["userStatus"])), .equal, .string("EMAIL_CONFIRMATION_PENDING")),
            ])
            _ = try await transaction.updateAll(
                Self.usersTable, matching: pending, changes: JSONObject([("userStatus", .string("ENABLED"))]))
        }
    }

    /// 3025 unless the link of `purpose` is live and its user's email is still the address it
    /// was mailed to, so a link never reaches an account whose address changed.
    private func requireLink(appID: String, token: String, purpose: ActionTokens.Purpose, logger: Logger) async throws {
        guard
            let holder = try await ActionTokens.holder(
                appID: appID, token: token, purpose: purpose, now: now(), session: pool(logger)),
            let address = holder.address,
            try await currentEmail(appID: appID, userID: holder.userID, logger: logger) == address
        else { throw UserError.invalidLink }
    }

    /// The user's email address as stored now, nil when none (or no such user).
    private func currentEmail(appID: String, userID: String, logger: Logger) async throws -> String? {
        let row = try await engine.object(
            Self.usersTable, matching: [("objectId", userID)], query: FindQuery(), identity: Self.system(appID),
            logger: logger)
        guard let row else { return nil }
        return try JSONParser.parse(row).object?["email"]?.string
    }

    /// `POST /users/resendconfirmation/{identity}`: a new confirmation link for a user whose
    /// address is not confirmed yet (the earlier link stops working).
    package func resendConfirmation(
        appID: String, identity value: String, clientAddress: String?, deadline: NIODeadline = .now() + .seconds(30),
        logger: Logger
    ) async throws {
        let (profile, policy) = try await emailRecipient(
            appID: appID, identity: value, clientAddress: clientAddress, logger: logger)
        guard profile["userStatus"]?.string == "EMAIL_CONFIRMATION_PENDING" else { throw UserError.alreadyConfirmed }
        try await sendConfirmation(appID: appID, profile: profile, policy: policy, deadline: deadline, logger: logger)
    }

    /// The profile an email request names by identity (3020 when none), with the app's policy;
    /// such requests are rate limited like logins, since each one sends mail.
    private func emailRecipient(appID: String, identity value: String, clientAddress: String?, logger: Logger)
        async throws -> (JSONObject, UserPolicy)
    {
        try await throttle.admit(identity: appID + " " + value.lowercased(), address: clientAddress)
        let policy = try await policy(appID, logger: logger)
        guard let user = try await findUser(appID: appID, identity: value, policy: policy, logger: logger),
            let profile = try JSONParser.parse(user).object
        else { throw UserError.unknownIdentity }
        return (profile, policy)
    }

    /// Mails `profile` its confirmation link, unless the app disabled the template.
    func sendConfirmation(
        appID: String, profile: JSONObject, policy: UserPolicy, deadline: NIODeadline, logger: Logger
    ) async throws {
        guard let userID = profile["objectId"]?.string, let email = profile["email"]?.string else {
            throw UserError.noEmailAddress
        }
        let mail = try requireMail()
        let template = try await EmailTemplate.load(appID: appID, event: .confirmation, session: pool(logger))
        guard template.enabled else { return }
        let token = try await ActionTokens.issue(
            appID: appID, userID: userID, address: email, purpose: .confirm,
            expires: now().addingTimeInterval(Double(policy.confirmationTokenSeconds)), session: pool(logger))
        let values = [
            "link": "\(mail.publicURL)/\(appID)/account/confirm-email/\(token)", "email": email,
            "name": profile["name"]?.string ?? email,
        ]
        try await send(template, values: values, to: email, mail: mail, deadline: deadline, logger: logger)
    }

    private func send(
        _ template: EmailTemplate, values: [String: String], to address: String, mail: AccountMail,
        deadline: NIODeadline, logger: Logger
    ) async throws {
        let (subject, text, html) = template.rendered(values)
        try await mail.send(
            SendEmail.Request(to: [address], subject: subject, text: text, html: html), logger, deadline)
    }

    func requireMail() throws -> AccountMail {
        guard let mail else { throw UserError.mailNotConfigured }
        return mail
    }
}
