/// What the published description's examples name: a table with an object, a user, a file, a
/// role, a template. The tests seed exactly these into the app they fuzz (TestSupport's
/// `DocumentExampleSeed`), so a fuzzer or a reader starting from the examples reaches the
/// success paths instead of 404s.
package enum DocumentExamples {
    /// A table with the ``objectID`` object, a `name` column and a `friends` relation to itself.
    package static let table = "Example"
    /// The object of ``table`` (object ids are UUIDs, upper-case as the server makes them).
    package static let objectID = "00000000-0000-4000-8000-0000000000E1"
    /// A column of ``table``.
    package static let column = "name"
    /// A file column (`FILE_REF`) of ``table`` and ``disposableTable``; ``objectID``'s holds a file.
    package static let fileColumn = "picture"
    /// A 1:N relation column of ``table`` to itself.
    package static let relation = "friends"
    /// A registered user's identity (email).
    package static let email = "example@example.com"
    /// A file in the app's tree.
    package static let filePath = "examples/hello.txt"
    /// A custom role.
    package static let role = "ExampleRole"
    /// A messaging channel.
    package static let channel = "default"
    /// An email template (and a push template) of the app.
    package static let template = "ExampleTemplate"
    /// A device registered for push.
    package static let deviceID = "example-device"
    /// A geo category (not `Default`, which cannot be created or removed).
    package static let geoCategory = "ExampleCategory"
    /// A geofence.
    package static let geofence = "ExampleFence"

    // The routes that remove what they name have examples of their own, so a fuzzer that
    // removes them once leaves the examples above in place.

    /// A table of objects the removal routes name: ``removedObjectID`` (removed),
    /// ``unlinkedObjectID`` (its ``relation`` to itself removed), ``quickBloxRemovedID``, and a
    /// ``disposableColumn``.
    package static let disposableTable = "Disposable"
    /// A table bulk removals empty (they succeed on an empty table too).
    package static let clearedTable = "Cleared"
    /// A table the schema route drops.
    package static let droppedTable = "Dropped"
    /// An object of ``disposableTable`` a removal route removes.
    package static let removedObjectID = "00000000-0000-4000-8000-0000000000E2"
    /// An object of ``disposableTable`` whose relation a removal route unlinks.
    package static let unlinkedObjectID = "00000000-0000-4000-8000-0000000000E3"
    /// An object of ``disposableTable`` QuickBlox's removal route removes.
    package static let quickBloxRemovedID = "00000000-0000-4000-8000-0000000000E4"
    /// An object of ``disposableTable`` whose ``fileColumn`` a removal route empties.
    package static let detachedObjectID = "00000000-0000-4000-8000-0000000000E5"
    /// An object of ``disposableTable`` the removal route that reads the id from its body removes.
    package static let bodyRemovedObjectID = "00000000-0000-4000-8000-0000000000E6"
    /// A column of ``disposableTable`` a removal route drops.
    package static let disposableColumn = "disposable"
    /// A role, templates, a device, a geofence, a geo category and a file removal routes remove.
    package static let disposableName = "Disposable"
    /// A device removal routes unregister.
    package static let disposableDevice = "disposable-device"
    /// A file a removal route removes.
    package static let disposableFile = "examples/disposable.txt"

    /// The data routes' path parameters (data-, relations- and files-service): tables, columns and
    /// relations are identifiers, objects are named by id, permission actions are GRANT, DENY or
    /// INHERIT; each with the seeded example (``DocumentExamples``).
    package static let dataPathParameters: [String: APISchema] = [
        "table": APISchema.identifier.examples(.text(DocumentExamples.table)),
        "id": objectIDParameter,
        "objectId": objectIDParameter,
        "column": APISchema.identifier.examples(.text(DocumentExamples.column)),
        "relation": APISchema.identifier.examples(.text(DocumentExamples.relation)),
        "target": .permissionAction,
        "action": .permissionAction,
    ]

    /// The data routes' path parameters where a route removes what they name.
    package static let dataRemovalPathParameters: [String: APISchema] = dataPathParameters.merging([
        "table": APISchema.identifier.examples(.text(disposableTable)),
        "id": APISchema.string.length(1).examples(.text(removedObjectID)),
        "column": APISchema.identifier.examples(.text(disposableColumn)),
    ]) { _, removal in removal }

    /// A path parameter naming `example` (a table, a name…) with at least one character.
    package static func named(_ example: String) -> APISchema {
        APISchema.string.length(1).examples(.text(example))
    }

    /// An object id in a path.
    package static let objectIDParameter = APISchema.string.length(1).examples(.text(DocumentExamples.objectID))
}

extension APISchema {
    /// A table, column or relation name: a letter and up to 62 letters, digits or underscores, or
    /// QuickBlox's `_parent_id` (DataEngine's `Identifier`).
    package static let identifier = APISchema.string.matching("^([A-Za-z][A-Za-z0-9_]{0,62}|_parent_id)$")

    /// A permission action in a path: GRANT, DENY or INHERIT.
    package static let permissionAction = APISchema.choice(["GRANT", "DENY", "INHERIT"])
}

extension DocumentExamples {
    /// The password of the users ``email``, ``profileUserID`` and ``pendingUserID`` name.
    package static let password = "example-pw"
    /// A user named by objectId, whose profile and status the profile routes change (made with
    /// the data API's server-code save, which takes an objectId, then given an address and a
    /// password through `PUT /users/{id}`).
    package static let profileUserID = "00000000-0000-4000-8000-0000000000D1"
    /// The email address of ``profileUserID``.
    package static let profileEmail = "profile@example.com"
    /// A user awaiting the confirmation of its email address, made as ``profileUserID`` is.
    package static let pendingUserID = "00000000-0000-4000-8000-0000000000D2"
    /// The email address of ``pendingUserID``, which `POST /users/resendconfirmation` names.
    package static let pendingEmail = "pending@example.com"
    /// A device type push templates reach.
    package static let deviceType = "ANDROID"
    /// The path the append command adds to (its first append makes the file).
    package static let appendedFile = "examples/appended.txt"
    /// An object of ``table`` QuickBlox's update route changes: its own, since an update may set
    /// permissions that keep every caller from the object afterwards.
    package static let quickBloxUpdatedID = "00000000-0000-4000-8000-0000000000C1"
}
