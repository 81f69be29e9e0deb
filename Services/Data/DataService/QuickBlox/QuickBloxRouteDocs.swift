import DataEngine
import InternalProtocol
import QueryLanguage

/// The QuickBlox routes' descriptions in `openapi.json`.
extension RouteDoc {
    private static let record = APISchema.object(
        [
            "_id": .string, "_parent_id": APISchema.string.orNull, "user_id": APISchema.string.orNull,
            "created_at": .integer, "updated_at": .integer,
        ], required: ["_id"])

    private static let page = APISchema.object(
        ["class_name": .string, "skip": .integer, "limit": .integer, "items": .array(record)],
        required: ["class_name", "skip", "limit", "items"])

    private static let ids = APISchema.object(["ids": .array(.string)], required: ["ids"])

    /// Users (by id) or groups (roles): 1 to 100, each a number or a string of 1 to 255 bytes.
    private static let principals = APISchema.array(APISchema(types: ["string", "integer"]).length(1, 255))
        .elements(1, QuickBloxPermissions.principalLimit)

    /// Who may do one operation: `ids` with `open_for_users_ids`, `groups` with `open_for_groups`.
    private static let access = APISchema.object(
        [
            "access": .choice(["open", "owner", "not_allowed", "open_for_users_ids", "open_for_groups"]),
            "ids": principals, "groups": principals,
        ], required: ["access"], closed: true
    ).requiringOne(of: [
        .object(["access": .choice(["open", "owner", "not_allowed"])]),
        .object(["access": .choice(["open_for_users_ids"])], required: ["ids"]),
        .object(["access": .choice(["open_for_groups"])], required: ["groups"]),
    ])

    private static let permissions = APISchema.object(
        ["read": access, "update": access, "delete": access], closed: true
    ).members(1)

    /// A member of a record body: a field (a column name or `_parent_id`), `_id`, an update
    /// operator or `permissions`.
    private static let member = APISchema.string.matching("^(?:" + FindQueryDocs.namePattern + "|_id)$")

    /// The parent record's `_id` (QuickBlox's strong reference), a string or null.
    private static let parent = APISchema.string.orNull.described("The parent record's _id")

    /// An update operator's fields and their arguments.
    private static func fields(_ argument: APISchema) -> APISchema {
        APISchema.map(argument).members(1, named: FindQueryDocs.name)
    }

    /// A record's fields (any JSON values) and its permissions, as a create takes them (also as
    /// a form: `name=x&permissions[read][access]=open`).
    private static let newRecord = APISchema.object(["_parent_id": parent, "permissions": permissions])
        .members(0, named: member)
        .described("The record's fields, and optionally its permissions")

    /// A record's fields, update operators and permissions, at least one of them (also taken as
    /// a form: `inc[f]=1`).
    private static let write = APISchema.object(
        [
            "inc": fields(.number), "push": fields(.any), "pull": fields(.any), "pull_all": fields(.any),
            "pop": fields(.either(APISchema.integer.within(-1, -1), APISchema.integer.within(1, 1))),
            "add_to_set": fields(.any), "permissions": permissions, "_parent_id": parent,
        ]
    ).members(1, named: member).described("Fields to set, update operators and permissions: at least one")

    /// Records by key (`"1"`, `"2"`, … in the order they are written), 1 to 100 of them.
    private static func records(_ record: APISchema) -> APISchema {
        .object(["record": APISchema.map(record).members(1, QuickBloxRoutes.maximumRecords)], required: ["record"])
    }

    /// The options of a QuickBlox list (`quickblox/data/{table}.json` and `data/{table}/filter`) as
    /// ``QuickBloxFind`` and `QuickBloxFilter` read them; the field filters (`field[gt]=…`)
    /// have the fields' own names, which no description can list. `noun` names what is listed.
    static func quickBloxFilterQuery(noun: String) -> [QueryParameter] {
        let field = "(?:" + FindQueryDocs.namePattern + "|_id)"
        return [
            QueryParameter("sort_asc", quickBloxField, "A field to sort by, ascending"),
            QueryParameter("sort_desc", quickBloxField, "A field to sort by, descending"),
            QueryParameter(
                "skip", APISchema.integer.within(0, CommonSchemas.largestInteger), "\(noun) to skip (default 0)"),
            QueryParameter(
                "limit",
                .either(
                    APISchema.integer.within(-1 ... -1), APISchema.integer.within(1...QuickBloxRoutes.maximumLimit)),
                "\(noun) per page, 1 to \(QuickBloxRoutes.maximumLimit) (default 100); -1: only the last"),
            QueryParameter(
                "count", .string, "1 or true (in any case) answers only the number of matches; other values list them"
            ),
            QueryParameter(
                "output[include]",
                APISchema.string.matching("^\(field)(?:,\(field)){0,\(QueryLimits.standard.maximumListItems - 1)}$"),
                "Fields to answer, comma-separated (_id comes along unless excluded)"),
            QueryParameter(
                "output[exclude]",
                APISchema.string.matching("^[^,]*(?:,[^,]*){0,\(QueryLimits.standard.maximumListItems - 1)}$"),
                "Fields to leave out, comma-separated"),
        ]
    }

    /// A field a QuickBlox list sorts by: a column, or QuickBlox's `_id`.
    private static let quickBloxField = APISchema.string.matching("^(?:" + FindQueryDocs.namePattern + "|_id)$")

    /// `POST quickblox/data/{table}.json`.
    static let quickBloxCreate = RouteDoc(
        "QuickBlox: creates a record (JSON or form body, optional permissions) and answers it",
        body: .json(newRecord), json: record
    ).linking(
        [
            ("ReadRecord", "GET", "quickblox/data/{table}/{id}.json"),
            ("UpdateRecord", "PUT", "quickblox/data/{table}/{id}.json"),
            ("DeleteRecord", "DELETE", "quickblox/data/{table}/{id}.json"),
        ],
        ["table": "$request.path.table", "id": "$response.body#/_id"])

    /// `GET quickblox/data/{table}.json`.
    static let quickBloxList = RouteDoc(
        "QuickBlox: finds records with its filters (field[gt]=…, sort_asc, skip, limit up to 1000 or -1, count=1, output[include|exclude])",
        query: quickBloxFilterQuery(noun: "Records"),
        json: .either(page, .object(["class_name": .string, "items_count": .integer], required: ["items_count"])))

    /// `GET quickblox/data/{table}/{id}.json`.
    static let quickBloxRead = RouteDoc(
        "QuickBlox: reads records by id (comma-separated), or with permissions=1 one record's permissions",
        query: [
            QueryParameter(
                "permissions", .string,
                "1 answers the permissions of the one record named; any other value reads the records")
        ],
        json: .either(page, .object(["permissions": permissions, "record_id": .string], required: ["permissions"])))

    /// `PUT quickblox/data/{table}/{id}.json`.
    static let quickBloxUpdate = RouteDoc(
        "QuickBlox: updates a record with fields, update operators and permissions, and answers it",
        body: .json(write), json: record
    ).path("id", DocumentExamples.named(DocumentExamples.quickBloxUpdatedID))

    /// `DELETE quickblox/data/{table}/{id}.json`.
    static let quickBloxDelete = RouteDoc(
        "QuickBlox: deletes one record or several comma-separated ones: which went, which were missing, which were not the caller's",
        json: .object(
            ["SuccessfullyDeleted": ids, "NotFound": ids, "WrongPermissions": ids],
            required: ["SuccessfullyDeleted", "NotFound", "WrongPermissions"]))

    /// `POST quickblox/data/{table}/multi.json`.
    static let quickBloxCreateMany = RouteDoc(
        "QuickBlox: creates up to 100 records, all or none, and answers them",
        body: .json(
            records(APISchema.object(["_parent_id": parent]).members(1, named: member).described("A record's fields"))),
        json: .object(["class_name": .string, "items": .array(record)], required: ["items"]))

    /// `PUT quickblox/data/{table}/multi.json`.
    static let quickBloxUpdateMany = RouteDoc(
        "QuickBlox: updates up to 100 records by _id together; the ids missing or not the caller's come back in not_found",
        body: .json(
            records(
                APISchema.object(["_id": APISchema.string.length(1), "_parent_id": parent], required: ["_id"])
                    .members(2, named: member)
                    .described("The record's _id and what changes: fields and update operators"))),
        json: .object(
            ["class_name": .string, "not_found": ids, "items": .array(record)], required: ["not_found", "items"]))
}
