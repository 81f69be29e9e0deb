import DataEngine
import InternalProtocol
import ServiceRuntime

/// The named schemas of files-service's routes, published in `openapi.json`'s components.
enum FileSchemas {
    /// `FileListingEntry`: one entry of a directory listing.
    static let listingEntry = APISchema.object(
        [
            "name": .string, "createdOn": .integer.described("Milliseconds since 1970"),
            "publicUrl": .string.described("Where the entry is downloaded"),
            "url": .string.described("Its path in the app's tree"), "size": .integer.described("Bytes"),
        ], required: ["name", "createdOn", "publicUrl", "url", "size"])

    /// `FileLocation`: where an uploaded file or a created directory is downloaded.
    static let location = APISchema.object(["fileURL": .string], required: ["fileURL"])

    /// Every schema by its component name.
    static let all: [String: APISchema] = ["FileListingEntry": listingEntry, "FileLocation": location]

}

/// Pieces several file descriptions share.
enum FileDocs {
    /// One name of a path as ``FilePath`` takes it: not `.` or `..`, without `/`, `\\`, `%` or
    /// control characters, at most 255 characters (the server counts 255 bytes).
    private static let name =
        #"\.{0,127}[^./\\%\u0000-\u001F\u007F-\u009F][^/\\%\u0000-\u001F\u007F-\u009F]{0,127}"#

    /// Names separated by `/`.
    private static let names = "\(name)(?:/\(name))*"

    /// A path in the app's tree: names separated by `/`, a final `/` naming a directory; at most
    /// 1024 bytes (``FilePath/maximumPathBytes``).
    static let path = APISchema.string.length(1, FilePath.maximumPathBytes).matching("^\(names)/?$")

    /// What `PUT files/…` names: a command followed by the path it acts on (`append/`,
    /// `append/binary/`, `binary/`, `permissions/{GRANT|DENY}/`), or one alone (`copy`, `move`,
    /// `rename`).
    static let command = APISchema.string.length(1, FilePath.maximumPathBytes).matching(
        "^(?:(?:append(?:/binary)?|binary)/\(names)"
            + "|permissions/(?:[Gg][Rr][Aa][Nn][Tt]|[Dd][Ee][Nn][Yy])(?:/\(names))?/?|copy|move|rename)$"
    ).examples(.text("append/" + DocumentExamples.appendedFile)).described(
        "The command, and the path it acts on: copy, move, rename, binary/{path}, append/{path}, "
            + "append/binary/{path} or permissions/{GRANT|DENY}/{path}")

    /// The query of a directory's listing, count or existence check.
    static let listing: [RouteDoc.QueryParameter] = [
        .init("action", .choice(["exists", "count"]), "exists: true or false; count: how many entries match"),
        .init("pattern", .string, "A name pattern with * and ?; every entry when absent, empty or *"),
        .init(
            "sub", .boolean,
            "Whether to descend into subdirectories (then only files are listed); true or false in any case"),
        .init("countDirectories", .boolean, "Whether a count includes directories; true or false in any case"),
        .init("pagesize", APISchema.integer.within(1...100), "Entries per page (100 when absent)"),
        .init("offset", APISchema.integer.within(0...Int(Int32.max)), "Entries to skip"),
    ]

    /// `?download=true`: the bytes come as an attachment.
    static let download = RouteDoc.QueryParameter(
        "download", .string, "true (in any case): answered with content-disposition attachment; other values: inline")

    /// The query of an image's resized copy.
    static let imageSize: [RouteDoc.QueryParameter] = [
        .init("width", APISchema.integer.within(1...4096), "An image's width (at most 4096 by default)"),
        .init("height", APISchema.integer.within(1...4096), "An image's height (at most 4096 by default)"),
        .init(
            "fit", .choice(["inside", "cover", "fill"]),
            "In any case: inside (the default), cover or fill; cover and fill need both sides; only with a side"),
        .init(
            "format", .choice(["jpeg", "jpg", "png", "webp"]),
            "In any case; the original's when it is one of them, else jpeg; only with a side"),
    ]

    /// `?overwrite=true`: an existing file is replaced.
    static let overwrite = RouteDoc.QueryParameter("overwrite", .boolean, "Whether to replace an existing file")

    /// `?field_name=`: the file field's column.
    static let fieldName = RouteDoc.QueryParameter(
        "field_name", FindQueryDocs.name.examples(.text(DocumentExamples.fileColumn)),
        "The FILE_REF column holding the file", required: true)

    /// A stored file's bytes of any type (typeless, so that a JSON file's bytes match as well).
    static let fileBytes = APISchema(format: "binary", description: "The file's bytes, typed by its name")

    /// A multipart upload; `required` says whether the route needs one.
    static func upload(required: Bool, _ description: String) -> RouteDoc.Body {
        RouteDoc.Body(
            mediaType: RouteDoc.Body.upload.mediaType, schema: RouteDoc.Body.upload.schema.described(description),
            required: required)
    }

    /// A multipart upload whose field `file` the route reads (when the body is multipart).
    static func fileUpload(required: Bool, _ description: String) -> RouteDoc.Body {
        RouteDoc.Body(
            mediaType: RouteDoc.Body.upload.mediaType,
            schema: APISchema.object(["file": .binary], required: ["file"]).described(description), required: required)
    }

    /// JSON `null`.
    static let null = APISchema(types: ["null"])
}

extension RouteDoc {
    /// `GET files`.
    static let listFileRoot = RouteDoc(
        "Lists the root directory of the app's files, or counts or checks its entries with action.",
        query: FileDocs.listing,
        json: .either(
            APISchema.boolean.described("action=exists"), APISchema.integer.described("action=count"),
            APISchema.array(.ref("FileListingEntry")).described("A page of the listing")))
    /// `GET files/{path}`.
    static let readFile = RouteDoc(
        "Downloads a file (or a resized image), or lists, counts or checks a directory.",
        query: FileDocs.listing + [FileDocs.download] + FileDocs.imageSize,
        answer: Body(
            mediaType: "*/*",
            schema: .any.described(
                "A file's bytes, typed by its name; for a directory, JSON as GET /files answers")))
    /// `POST files/{path}`.
    static let uploadFile = RouteDoc(
        "Uploads a file, appends to one (append/{path}), or creates the directory a path ending in / names.",
        query: [FileDocs.overwrite],
        body: FileDocs.fileUpload(
            required: false,
            "The file in the field 'file'; a JSON {\"url\"} body fetches it from the web; none for a directory"),
        json: .ref("FileLocation"))
    /// `DELETE files/{path}`.
    static let deleteFile = RouteDoc(
        "Deletes a file, or a directory with everything in it.", json: FileDocs.null)
    /// `PUT files/{command}/…`.
    static let fileCommand = RouteDoc(
        "Runs a file command: copy, move, rename, binary/ (base64), append/, or permissions/.",
        query: [FileDocs.overwrite],
        body: Body(
            mediaType: "*/*",
            schema: .any.described(
                "JSON for copy, move, rename and permissions/{GRANT|DENY}/{path}; base64 text for binary/ and "
                    + "append/binary/; the bytes to add for append/"),
            required: false),
        json: APISchema.string.orNull.described("The file's URL; null after a permission change")
    ).path("path", FileDocs.command)
    /// `POST data/{table}/{id}/file`.
    static let uploadFileField = RouteDoc(
        "Uploads a file into an object's file field, replacing the file it held.",
        query: [FileDocs.fieldName], body: FileDocs.upload(required: true, "The file in the field 'file'"),
        json: .ref("DataObject"))
    /// `GET data/{table}/{id}/file`.
    static let downloadFileField = RouteDoc(
        "Downloads the file an object's file field holds.", query: [FileDocs.fieldName, FileDocs.download],
        answer: Body(mediaType: "*/*", schema: FileDocs.fileBytes))
    /// `DELETE data/{table}/{id}/file`.
    static let deleteFileField = RouteDoc(
        "Empties an object's file field and deletes its file.", query: [FileDocs.fieldName], json: .ref("DataObject")
    ).path("id", DocumentExamples.named(DocumentExamples.detachedObjectID))
}
