import InternalProtocol
import ServiceRuntime

/// The named schemas of messaging-service's routes, published in `openapi.json`'s components.
enum MessagingSchemas {
    /// A header or template value: a string, a number, a boolean or null.
    static let scalar = APISchema(types: ["string", "number", "boolean", "null"])

    /// `MessagingMessageStatus`: a message's id and status (`pushStatus` only when asked for a pushed one).
    static let messageStatus = APISchema.object(
        [
            "messageId": .string,
            "status": .string.described("published, scheduled, cancelled, failed, or unknown"),
            "errorMessage": .string.orNull,
            "pushStatus": .ref("MessagingPushStatus"),
        ], required: ["messageId", "status", "errorMessage"])

    /// `MessagingPushStatus`: how far a push to devices got.
    static let pushStatus = APISchema.object(
        [
            "pending": .integer, "delivered": .integer, "failed": .integer,
            "failures": .array(.string).described("Up to five reasons"),
            "resolved": .boolean.described("Whether the devices to push to are known yet"),
        ], required: ["pending", "delivered", "failed", "failures", "resolved"])

    /// `MessagingMessage`: one message as a poll answers it.
    static let message = APISchema.object(
        [
            "messageId": .string, "data": .any, "publishedAt": .integer.described("Milliseconds since 1970"),
            "headers": .map(scalar), "publisherId": .string, "subtopic": .string,
        ], required: ["messageId", "data", "publishedAt", "headers"])

    /// `MessagingSettings`: an app's messaging settings.
    static let settings = APISchema.object(
        ["messageRetention": .integer.described("How long messages can be polled, in seconds")],
        required: ["messageRetention"])

    /// `MessagingEmailTemplate`: a stored email template.
    static let emailTemplate = APISchema.object(
        [
            "name": .string, "subject": .string,
            "bodyparts": .object(
                ["textmessage": .string.orNull, "htmlmessage": .string.orNull],
                required: ["textmessage", "htmlmessage"]),
        ], required: ["name", "subject", "bodyparts"])

    /// `MessagingDeviceRegistration`: a device registered for push.
    static let deviceRegistration = APISchema.object(
        [
            "id": .string, "deviceToken": .string, "deviceId": .string,
            "os": .choice(["IOS", "ANDROID", "WP", "OSX"]), "osVersion": .string.orNull,
            "expiration": .integer.orNull.described("Milliseconds since 1970; null when it does not end"),
            "channels": .array(.string),
        ], required: ["id", "deviceToken", "deviceId", "os", "osVersion", "expiration", "channels"])

    /// `MessagingPushCredentials`: the push credentials that are set, without their keys.
    static let pushCredentials = APISchema.object([
        "apns": .object(
            [
                "keyId": .string, "teamId": .string, "bundleId": .string, "production": .boolean,
                "updated": .integer.described("Milliseconds since 1970"),
            ], required: ["updated"]),
        "fcm": .object(
            [
                "project_id": .string, "client_email": .string, "private_key_id": .string, "token_uri": .string,
                "updated": .integer.described("Milliseconds since 1970"),
            ], required: ["updated"]),
    ])

    /// `MessagingPushTemplate`: a stored push template, its members as they were set.
    static let pushTemplate = APISchema.object(
        [
            "channel": .string, "message": .any, "headers": .any,
            "pushBroadcast": MessagingDocs.broadcast, "pushSinglecast": MessagingDocs.singlecast,
            "segmentQuery": .string.orNull,
        ], required: ["channel"])

    /// Every schema by its component name.
    static let all: [String: APISchema] = [
        "MessagingMessageStatus": messageStatus, "MessagingPushStatus": pushStatus, "MessagingMessage": message,
        "MessagingSettings": settings, "MessagingEmailTemplate": emailTemplate,
        "MessagingDeviceRegistration": deviceRegistration, "MessagingPushCredentials": pushCredentials,
        "MessagingPushTemplate": pushTemplate,
    ]

}

/// Pieces several messaging descriptions share.
private enum MessagingDocs {
    /// `pushBroadcast`: an OS mask from 1 to 15 or names such as `FOR_IOS|FOR_ANDROID`.
    static let broadcast = APISchema(types: ["integer", "string", "null"])
        .described("The systems to push to: a mask (IOS 1, ANDROID 2, WP 4, OSX 8) or names like FOR_IOS|FOR_ANDROID")
    /// `pushSinglecast`: device ids.
    static let singlecast = APISchema.array(.string).orNull.described("The device ids to push to")
    /// `{"result": true|false}`.
    static let result = APISchema.object(["result": .boolean], required: ["result"])
    /// An array of strings, or null for none.
    static let strings = APISchema.array(.string).orNull
    /// Apple's key and team ids: 10 letters or digits.
    static let appleID = APISchema.string.matching("^[A-Za-z0-9]{10}$")
    /// Template values: names to strings, numbers or booleans.
    static let values = APISchema.map(MessagingSchemas.scalar).orNull
    /// An address as ``MailMessage/isValidAddress(_:)`` takes it: `local@domain`, each part
    /// without spaces (Unicode's, U+0085 included), line breaks, angle brackets, parentheses,
    /// square brackets, commas, semicolons, colons, quotes or backslashes; at most 254 bytes.
    static let address = APISchema.string.length(3, 254).matching(
        #"^[^@\s\u0085<>()\[\],;:"\\]+@[^@\s\u0085<>()\[\],;:"\\]+$"#)

    /// Addresses, or null for none; one message has at most 100 recipients in all.
    static let addresses = APISchema.array(address).elements(0, MailMessage.recipientLimit).orNull

    /// An object whose member `name` holds at least one address.
    static func someAddress(in name: String) -> APISchema {
        .object([name: APISchema.array(address).elements(1, MailMessage.recipientLimit)], required: [name])
    }

    /// A subject: one line (no line break of any kind) of at most 998 characters.
    static let subject = APISchema.string.length(0, MailMessage.subjectLimit).matching(
        #"^[^\n\r\u000B\u000C\u0085\u2028\u2029]*$"#)

    /// The `bodyparts` of an email or a template: a text message, an HTML message or both (at
    /// least one of them a string), each of at most `limit` characters (bytes, on the server).
    static func bodyparts(upTo limit: Int? = nil) -> APISchema {
        let part = APISchema.string.length(0, limit).orNull
        return APISchema.object(["textmessage": part, "htmlmessage": part]).requiringOne(of: [
            .object(["textmessage": .string], required: ["textmessage"]),
            .object(["htmlmessage": .string], required: ["htmlmessage"]),
        ])
    }

    /// A template's name as ``EmailTemplate/validatedName(_:)`` takes it: 1 to 255 characters
    /// (bytes, on the server), without `/`, control characters or line breaks.
    static let templateName = APISchema.string.length(1, 255).matching(
        #"^[^/\u0000-\u001F\u0085\u2028\u2029]+$"#)

    /// Paths of files in storage that every email carries.
    static let attachments = strings.described("Paths of files in storage")

    /// A device type, in any case.
    static let deviceType = APISchema.string.matching(
        "^([Ii][Oo][Ss]|[Aa][Nn][Dd][Rr][Oo][Ii][Dd]|[Ww][Pp]|[Oo][Ss][Xx])$")

    /// A channel name: 1 to 255 letters, digits, `_`, `-` or `.` (``ChannelName``).
    static let channel = APISchema.string.matching("^[A-Za-z0-9_.-]{1,255}$")

    /// The delivery options of a publish (and of a push template).
    static let delivery: [String: APISchema] = [
        "publishPolicy": APISchema(types: ["string", "integer", "null"])
            .described("PUSH, PUBSUB or BOTH (or 0, 1, 2); BOTH when absent"),
        "pushPolicy": APISchema(types: ["string", "integer", "null"]).described("An older name of publishPolicy"),
        "pushBroadcast": broadcast, "pushSinglecast": singlecast,
        "segmentQuery": APISchema.string.orNull.described("A condition over deviceId, os and osVersion"),
    ]

    /// The members of a publish body besides its delivery options.
    static let message: [String: APISchema] = [
        "message": .any, "publisherId": .string.orNull, "headers": .map(MessagingSchemas.scalar).orNull,
        "subtopic": .string.orNull,
        "publishAt": APISchema(types: ["integer", "null"]).described("When to publish, in milliseconds since 1970"),
        "repeatEvery": APISchema(types: ["integer", "null"]).within(1...31_536_000)
            .described("How often to publish again, in seconds"),
        "repeatExpiresAt": APISchema(types: ["integer", "null"]).described("When to stop, in milliseconds since 1970"),
    ]

    /// A publish body.
    static let publish = APISchema.object(message.merging(delivery) { ours, _ in ours })

    /// The Engine.IO query parameters of the real-time routes (`transport` is the route's own).
    static func engineIO(transport: String, sidRequired: Bool = false) -> [RouteDoc.QueryParameter] {
        [
            .init("EIO", APISchema.integer.within(3...4), "The Engine.IO revision", required: true),
            .init("transport", .choice([transport]), required: true),
            .init(
                "sid", APISchema(types: ["string"], format: "uuid"),
                "The session to continue, as its open packet named it", required: sidRequired),
            .init("clientId", .string, "The client's own id; empty is none"),
        ]
    }
}

// MARK: Publish and subscribe

extension RouteDoc {
    /// `POST messaging/{channel}`.
    static let publishMessage = RouteDoc(
        "Publishes a message to a channel, or schedules it.", body: .json(MessagingDocs.publish),
        json: .ref("MessagingMessageStatus"))
    /// `DELETE messaging/{messageId}`.
    static let cancelScheduledMessage = RouteDoc(
        "Cancels a scheduled message; the path names the message id.",
        json: .object(["status": .choice(["cancelled"]), "messageId": .string], required: ["status", "messageId"]))
    /// `GET messaging/{messageId}`.
    static let messageStatus = RouteDoc(
        "Answers the status of a message; the path names the message id.", json: .ref("MessagingMessageStatus"))
    /// `POST messaging/{channel}/subscribe`.
    static let subscribeToChannel = RouteDoc(
        "Subscribes to a channel, to poll its messages from now on.",
        body: .json(
            APISchema.object(["subscriberId": .string.orNull, "subtopic": .string.orNull, "selector": .string.orNull])
                .orNull,
            required: false),
        json: .object(["subscriptionId": .string], required: ["subscriptionId"]))
    /// `GET messaging/{channel}/properties`.
    static let channelProperties = RouteDoc(
        "Describes a channel.", json: .object(["name": .string], required: ["name"]))
    /// `GET messaging/{channel}/{subscriptionId}`.
    static let pollSubscription = RouteDoc(
        "Hands out the messages a subscription has not received yet, at once (none when nothing waits).",
        json: .object(["messages": .array(.ref("MessagingMessage"))], required: ["messages"]))
    /// `DELETE messaging/channels/{channel}`.
    static let deleteChannel = RouteDoc(
        "Deletes a channel with its messages and subscriptions (server-code key).", json: MessagingDocs.result)
    /// `GET messaging/settings`.
    static let messagingSettings = RouteDoc(
        "Answers the app's messaging settings (server-code key).", json: .ref("MessagingSettings"))
    /// `PUT messaging/settings`.
    static let setMessagingSettings = RouteDoc(
        "Sets how long messages published from now on can be polled (server-code key).",
        body: .json(
            .object(
                ["messageRetention": APISchema.integer.within(1...604_800).described("Seconds")],
                required: ["messageRetention"])),
        json: .ref("MessagingSettings"))
}

// MARK: Email

extension RouteDoc {
    /// `POST messaging/email`.
    static let sendEmail = RouteDoc(
        "Sends an email through the app's relay (server-code key).",
        body: .json(
            APISchema.object(
                [
                    "subject": MessagingDocs.subject.orNull, "bodyparts": MessagingDocs.bodyparts(),
                    "to": MessagingDocs.addresses, "cc": MessagingDocs.addresses, "bcc": MessagingDocs.addresses,
                    "attachment": MessagingDocs.attachments, "attachments": MessagingDocs.attachments,
                ], required: ["bodyparts"]
            ).requiringOne(of: ["to", "cc", "bcc"].map(MessagingDocs.someAddress(in:)))
                .described("At least one recipient in to, cc or bcc (100 in all at most), and a text or HTML message")),
        json: .object(["messageId": .string, "status": .string], required: ["messageId", "status"]))
    /// `POST emailtemplate/send`.
    static let sendEmailTemplate = RouteDoc(
        "Sends an email template to addresses and to the users a criteria finds (server-code key).",
        body: .json(
            APISchema.object([
                "template-name": MessagingDocs.templateName.examples(.text(DocumentExamples.template))
                    .described("The template's name"),
                "templateName": MessagingDocs.templateName.described(
                    "The template's name, when template-name is absent"),
                "addresses": MessagingDocs.addresses, "cc-addresses": MessagingDocs.addresses,
                "bcc-addresses": MessagingDocs.addresses,
                "criteria": APISchema.string.orNull.examples(.text("email = '\(DocumentExamples.email)'"))
                    .described("A where clause over Users, finding at most 100 of them"),
                "uniqueEmails": .boolean.orNull,
                "template-values": MessagingDocs.values.described("Placeholder values (templateValues is read too)"),
                "attachment": MessagingDocs.attachments, "attachments": MessagingDocs.attachments,
            ])
            .requiringOne(of: [
                .object([:], required: ["template-name"]), .object([:], required: ["templateName"]),
            ])
            .requiringOne(
                of: ["addresses", "cc-addresses", "bcc-addresses"].map(MessagingDocs.someAddress(in:)) + [
                    APISchema.object(["criteria": APISchema.string.matching(#"\S"#)], required: ["criteria"])
                ]
            )
            .described("A template name, and addresses (to, cc or bcc) or a criteria over Users")),
        json: .object(
            ["messageId": .string.orNull, "status": .choice(["PUBLISHED"]), "sent": .integer],
            required: ["messageId", "status", "sent"]))
    /// `PUT emailtemplate/{name}`.
    static let putEmailTemplate = RouteDoc(
        "Creates or replaces an email template (server-code key).",
        body: .json(
            .object(
                [
                    "subject": MessagingDocs.subject,
                    "bodyparts": MessagingDocs.bodyparts(upTo: EmailTemplate.bodyLimit),
                ],
                required: ["subject", "bodyparts"])),
        json: .ref("MessagingEmailTemplate")
    ).path(
        "name", MessagingDocs.templateName.examples(.text(DocumentExamples.template))
    ).linking(
        [("ReadTemplate", "GET", "emailtemplate/:name"), ("DeleteTemplate", "DELETE", "emailtemplate/:name")],
        ["name": "$request.path.name"])
    /// `GET emailtemplate/{name}`.
    static let emailTemplate = RouteDoc(
        "Answers an email template (server-code key).", json: .ref("MessagingEmailTemplate"))
    /// `GET emailtemplate`.
    static let emailTemplateNames = RouteDoc(
        "Lists the names of the app's email templates (server-code key).", json: .array(.string))
    /// `DELETE emailtemplate/{name}`.
    static let deleteEmailTemplate = RouteDoc(
        "Deletes an email template (server-code key).", json: MessagingDocs.result)
}

// MARK: Devices and push

extension RouteDoc {
    /// `POST messaging/registrations`.
    static let registerDevice = RouteDoc(
        "Registers a device for push on channels, or registers it again.",
        body: .json(
            .object(
                [
                    "deviceToken": APISchema.string.length(1, DeviceRegistration.maximumTokenLength),
                    "deviceId": APISchema.string.length(1, DeviceRegistration.maximumDeviceIdLength),
                    "os": MessagingDocs.deviceType.described("IOS, ANDROID, WP or OSX, in any case"),
                    "osVersion": APISchema.string.length(0, 255).orNull,
                    "channels": APISchema.array(MessagingDocs.channel).elements(0, DeviceRegistration.maximumChannels)
                        .orNull.described("The channels; [\"default\"] when absent or empty"),
                    "expiration": APISchema(types: ["number", "null"]).within(1, 8_999_999_999_999_999)
                        .described("When the registration ends, in the future: epoch seconds or milliseconds"),
                ], required: ["deviceToken", "deviceId", "os"])),
        json: .object(["registrationId": .string], required: ["registrationId"])
    ).linking(
        [
            ("ReadRegistration", "GET", "messaging/registrations/:deviceId"),
            ("DeleteRegistration", "DELETE", "messaging/registrations/:deviceId"),
        ],
        ["deviceId": "$request.body#/deviceId"])
    /// `GET messaging/registrations/{deviceId}`.
    static let deviceRegistration = RouteDoc(
        "Answers a device's live registration, as an array of one.", json: .array(.ref("MessagingDeviceRegistration")))
    /// `DELETE messaging/registrations/{deviceId}`.
    static let unregisterDevice = RouteDoc("Removes a device's registration.", json: MessagingDocs.result)
    /// `PUT messaging/push/credentials/{provider}`.
    static let setPushCredential = RouteDoc(
        "Sets the app's APNs key or FCM service account (server-code key).",
        body: .json(
            .either(
                .object(
                    [
                        "keyId": MessagingDocs.appleID, "teamId": MessagingDocs.appleID,
                        "bundleId": APISchema.string.length(1, 1_024),
                        "privateKey": APISchema.string.length(1, 8_192).described("The .p8 key (P-256) in PEM"),
                        "production": .boolean.orNull,
                    ], required: ["keyId", "teamId", "bundleId", "privateKey"]),
                .object(
                    [
                        "type": .choice(["service_account"]), "project_id": APISchema.string.length(1, 1_024),
                        "client_email": APISchema.string.length(1, 1_024),
                        "private_key_id": APISchema.string.length(1, 1_024),
                        "private_key": APISchema.string.length(1, 16_384).described(
                            "An RSA key of 2048 bits or more in PEM"),
                        "token_uri": APISchema.string.length(1, 1_024).matching("^https://[^/?#]+"),
                    ], required: ["project_id", "client_email", "private_key_id", "private_key", "token_uri"])
            ).described("APNs: keyId, teamId, bundleId, privateKey; FCM: the service-account file")),
        json: .ref("MessagingPushCredentials"))
    /// `GET messaging/push/credentials`.
    static let pushCredentials = RouteDoc(
        "Answers which push credentials are set, without their keys (server-code key).",
        json: .ref("MessagingPushCredentials"))
    /// `DELETE messaging/push/credentials/{provider}`.
    static let deletePushCredential = RouteDoc(
        "Removes the app's credential for a push provider (server-code key).", json: MessagingDocs.result)
    /// `PUT messaging/pushtemplates/{name}`.
    static let putPushTemplate = RouteDoc(
        "Creates or replaces a push template (server-code key).",
        body: .json(
            .object(
                [
                    "channel": APISchema.any.described("The channel; default when absent or not a string"),
                    "message": .any, "headers": APISchema.any.described("Header names to strings, numbers or booleans"),
                    "pushBroadcast": MessagingDocs.broadcast, "pushSinglecast": MessagingDocs.singlecast,
                    "segmentQuery": .string.orNull,
                ], closed: true)),
        json: .ref("MessagingPushTemplate"))
    /// `DELETE messaging/pushtemplates/{name}`.
    static let deletePushTemplate = RouteDoc("Deletes a push template (server-code key).", json: MessagingDocs.result)
    /// `GET messaging/pushtemplates`.
    static let pushTemplates = RouteDoc(
        "Answers every push template, by name.", json: .map(.ref("MessagingPushTemplate")))
    /// `GET messaging/pushtemplates/{deviceType}`.
    static let pushTemplatesForDevice = RouteDoc(
        "Answers the push templates that reach a device type (IOS, ANDROID, WP or OSX), by name.",
        json: .map(.ref("MessagingPushTemplate"))
    ).path(
        "name",
        MessagingDocs.deviceType.examples(.text(DocumentExamples.deviceType)).described(
            "A device type (IOS, ANDROID, WP or OSX, in any case); the other methods name a template here"))
    /// `POST messaging/push/{name}`.
    static let pushFromTemplate = RouteDoc(
        "Publishes a push template, filling its placeholders.",
        body: .json(
            .either(
                .object(["templateValues": MessagingDocs.values]),
                APISchema(types: ["array", "string", "number", "boolean", "null"])
            ).described("An object with templateValues (or template-values); any other JSON means no values"),
            required: false),
        json: .ref("MessagingMessageStatus"))
}

// MARK: Real time

extension RouteDoc {
    /// `GET rt/socket`.
    static let realTimeSocket = RouteDoc(
        "Opens a real-time Socket.IO session; takes a WebSocket upgrade (426 without one).",
        query: MessagingDocs.engineIO(transport: "websocket"), answer: Body(mediaType: "", schema: .any), status: 101)
    /// `GET rt/poll`.
    static let realTimePoll = RouteDoc(
        "Long-polls a real-time session: opens one without sid, else waits for what it sent.",
        query: MessagingDocs.engineIO(transport: "polling"),
        answer: Body(
            mediaType: "text/plain",
            schema: APISchema.string.described(
                "Engine.IO packets: the open packet, what the session sent, or a noop after the ping interval")))
    /// `POST rt/poll`.
    static let realTimePost = RouteDoc(
        "Sends Engine.IO packets to a long-polling real-time session.",
        query: MessagingDocs.engineIO(transport: "polling", sidRequired: true),
        body: Body(
            mediaType: "text/plain", schema: APISchema.string.described("An Engine.IO payload"), required: false),
        answer: Body(mediaType: "text/plain", schema: .choice(["ok"])))
}
