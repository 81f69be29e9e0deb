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

    private static let access = APISchema.object(
        [
            "access": .choice(["open", "owner", "not_allowed", "open_for_users_ids", "open_for_groups"]),
            "ids": .array(.string), "groups": .array(.string),
        ], required: ["access"])

    private static let permissions = APISchema.object(["read": access, "update": access, "delete": access])

    /// A record's fields, update operators and permissions (also taken as a form: `inc[f]=1`).
    private static let write = APISchema.object(
        [
            "inc": .map(.number), "push": .anyObject, "pull": .anyObject, "pull_all": .anyObject,
            "pop": .map(.integer), "add_to_set": .anyObject, "permissions": permissions,
        ])

    private static let records = APISchema.object(["record": .map(.anyObject)], required: ["record"])

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
        body: .json(write), json: record
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
        body: .json(write), json: record)

    /// `DELETE quickblox/data/{table}/{id}.json`.
    static let quickBloxDelete = RouteDoc(
        "QuickBlox: deletes one record or several comma-separated ones: which went, which were missing, which were not the caller's",
        json: .object(
            ["SuccessfullyDeleted": ids, "NotFound": ids, "WrongPermissions": ids],
            required: ["SuccessfullyDeleted", "NotFound", "WrongPermissions"]))

    /// `POST quickblox/data/{table}/multi.json`.
    static let quickBloxCreateMany = RouteDoc(
        "QuickBlox: creates up to 100 records, all or none, and answers them",
        body: .json(records), json: .object(["class_name": .string, "items": .array(record)], required: ["items"]))

    /// `PUT quickblox/data/{table}/multi.json`.
    static let quickBloxUpdateMany = RouteDoc(
        "QuickBlox: updates up to 100 records by _id together; the ids missing or not the caller's come back in not_found",
        body: .json(records),
        json: .object(
            ["class_name": .string, "not_found": ids, "items": .array(record)], required: ["not_found", "items"]))
}
