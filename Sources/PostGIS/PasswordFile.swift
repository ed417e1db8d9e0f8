// The password of a `postgresql://` URL that carries none, found as libpq finds it: the
// environment's PGPASSWORD, else the password file (PGPASSFILE, else ~/.pgpass). So a password
// need not sit in a command line or a unit file, and a setup made for psql works as it is.
//
// The file's lines are `hostname:port:database:username:password`; `*` in any of the first four
// fields matches anything, `\:` and `\\` stand for a colon and a backslash, and the first line
// that matches wins (lines starting with `#` are comments). As libpq does, a file that group or
// others may read or write (anything beyond 0600), or that is not a regular file, is ignored.

import Foundation
#if canImport(Glibc)
import Glibc
#endif

enum PasswordFile {
    /// The password for `url` on `server` (one of its hosts; libpq looks each one up) from
    /// `environment` (PGPASSWORD, PGPASSFILE, HOME), or nil.
    static func password(for url: PostGISURL, on server: PostGISURL.Server? = nil,
                         environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        if let password = environment["PGPASSWORD"], !password.isEmpty { return password }
        let path: String
        if let file = environment["PGPASSFILE"], !file.isEmpty {
            path = file
        } else if let home = environment["HOME"], !home.isEmpty {
            path = home + "/.pgpass"
        } else {
            return nil
        }
        guard let text = privateText(at: path) else { return nil }
        let server = server ?? url.servers[0]
        return match(text, host: server.host, port: server.port, database: url.database, user: url.user)
    }

    /// The file's text when it is a regular file only its owner may read or write.
    static func privateText(at path: String) -> String? {
        var status = stat()
        guard stat(path, &status) == 0, status.st_mode & mode_t(S_IFMT) == mode_t(S_IFREG),
              status.st_mode & mode_t(S_IRWXG | S_IRWXO) == 0 else { return nil }
        return try? String(contentsOfFile: path, encoding: .utf8)
    }

    /// The password of the first line of `text` that matches.
    static func match(_ text: String, host: String, port: Int, database: String, user: String) -> String? {
        let wanted = [host, String(port), database, user]
        for line in text.split(whereSeparator: { $0 == "\n" || $0 == "\r\n" }) where !line.hasPrefix("#") {
            let fields = self.fields(String(line))
            guard fields.count >= 5 else { continue }
            if zip(fields.prefix(4), wanted).allSatisfy({ $0 == "*" || $0 == $1 }) { return fields[4] }
        }
        return nil
    }

    /// A line's fields: split at colons that no backslash escapes, escapes undone. Everything
    /// after the fourth colon is the password (which may hold colons, escaped or not).
    static func fields(_ line: String) -> [String] {
        var fields: [String] = []
        var field = ""
        var escaped = false
        for character in line {
            if escaped {
                field.append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == ":" && fields.count < 4 {
                fields.append(field)
                field = ""
            } else {
                field.append(character)
            }
        }
        fields.append(field + (escaped ? "\\" : ""))  // a backslash at the end stays, as in libpq
        return fields
    }
}
