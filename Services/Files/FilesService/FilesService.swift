import Foundation
import Configuration
import InternalProtocol
import NIOCore
import PostgresSupport
import ServiceRuntime

/// files-service: every app's file tree (contract §4): metadata in PostgreSQL, bytes in a
/// ``FileStorage``, uploads and downloads streamed.
///
/// Configuration: `BAAS_FILES_ROOT` (the local storage directory, default `.local/files`),
/// `BAAS_FILES_PUBLIC_URL` (the gateway's public base URL in file URLs, default
/// `http://localhost:8080`), `BAAS_FILES_MAX_UPLOAD_BYTES` (default 5 GiB),
/// `BAAS_FILES_IDLE_TIMEOUT_SECONDS` (how long a transfer may stay silent, default 60),
/// `BAAS_FILES_DELETE_GRACE_SECONDS` (how long replaced bytes stay readable for downloads
/// under way, default 60) and `BAAS_FILES_GARBAGE_INTERVAL_SECONDS` (default 30).
/// `BAAS_FILES_URL_ALLOWED_HOSTS` (comma-separated) names hosts an upload from a URL may fetch
/// even though they resolve to loopback or private addresses (development and tests).
/// `BAAS_FILES_STORAGE=s3` stores bytes in an S3-compatible bucket instead of `BAAS_FILES_ROOT`:
/// `BAAS_FILES_S3_ENDPOINT`, `BAAS_FILES_S3_BUCKET`, `BAAS_FILES_S3_REGION` (default
/// `us-east-1`), `BAAS_FILES_S3_ACCESS_KEY_ID` and `BAAS_FILES_S3_SECRET_ACCESS_KEY`.
public enum FilesService: BackendService {
    public static let name = ServiceName.files

    public static let migrations: [any DatabaseMigration] = FileMigrations.all

    public static func register(
        operations: inout OperationRegistry, routes: inout PublicRoutes, environment: ServiceEnvironment
    ) throws {
        let reader = environment.configuration.reader.scoped(to: "files")
        let grace = reader.int(forKey: "deleteGraceSeconds", default: 60)
        let interval = reader.int(forKey: "garbageIntervalSeconds", default: 30)
        let upload = reader.int(forKey: "maxUploadBytes", default: 5 << 30)
        let idle = reader.int(forKey: "idleTimeoutSeconds", default: 60)
        guard grace >= 0, interval >= 1, upload >= 1, idle >= 1 else {
            throw UsageError("BAAS_FILES_* settings must be positive (the grace may be 0)")
        }
        let catalog = FileCatalog(database: environment.database, logger: environment.logger, deletionGrace: Int64(grace) * 1000)
        let storage = try storage(reader)
        environment.background.add(GarbageCollector(catalog: catalog, storage: storage, interval: .seconds(interval)))
        let urls = FileURLs(publicURL: String(reader.string(forKey: "publicUrl", default: "http://localhost:8080").trimmingSuffix("/")))
        let allowed = reader.string(forKey: "urlAllowedHosts", default: "").split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty }
        let sources = URLSource(allowedHosts: Set(allowed), idleTimeout: .seconds(Int64(idle)))
        FileRoutes(
            catalog: catalog, storage: storage, urls: urls, limits: FileLimits(upload: upload, idleTimeout: .seconds(idle)),
            sources: sources
        ).add(to: &routes)
    }
}

extension FilesService {
    /// The configured storage backend.
    static func storage(_ reader: ConfigReader) throws -> any FileStorage {
        switch reader.string(forKey: "storage", default: "local") {
        case "local":
            return LocalDiskStorage(root: reader.string(forKey: "root", default: ".local/files"))
        case "s3":
            let s3 = reader.scoped(to: "s3")
            func required(_ key: String, _ name: String) throws -> String {
                guard let value = s3.string(forKey: ConfigKey(key)), !value.isEmpty else {
                    throw UsageError("BAAS_FILES_STORAGE=s3 needs BAAS_FILES_S3_\(name)")
                }
                return value
            }
            return S3Storage(
                configuration: .init(
                    endpoint: try required("endpoint", "ENDPOINT"), bucket: try required("bucket", "BUCKET"),
                    region: s3.string(forKey: "region", default: "us-east-1"),
                    accessKeyID: try required("accessKeyId", "ACCESS_KEY_ID"),
                    secretAccessKey: try required("secretAccessKey", "SECRET_ACCESS_KEY")))
        case let other:
            throw UsageError("BAAS_FILES_STORAGE must be local or s3, not \(other)")
        }
    }
}

extension String {
    fileprivate func trimmingSuffix(_ suffix: String) -> Substring {
        var text = Substring(self)
        while text.hasSuffix(suffix) { text = text.dropLast(suffix.count) }
        return text
    }
}
