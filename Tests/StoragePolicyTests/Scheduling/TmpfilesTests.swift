import Testing
@testable import StoragePolicyReports

@Suite("tmpfiles.d lines and the notes they give a plan") struct TmpfilesTests {
    @Test("age lines are read with their modifiers, quotes and escapes; comments, bad lines and other types are not")
    func parse() {
        let text = """
            # Debian 13
            q /tmp 1777 root root 10d
            D! /tmp/.X11-unix 1777 root root 10d
            d /var/cache/man 0755 man man -
            v "/srv/with space" 0755 - - ~1w
            e /srv/a\\x20b - - - cmA:30d
            L /etc/x - - - - /target
            x /tmp/keep-*
            d "/unclosed 0755 - - 1d
            ?? /nope - - - 1d
            d %h/.cache - - - 5d

            """
        let lines = Tmpfiles.parse(Array(text.utf8), file: "/etc/tmpfiles.d/t.conf")
        #expect(lines.map(\.number) == [2, 3, 4, 5, 6, 8, 11])
        #expect(lines[0] == Tmpfiles.Line(file: "/etc/tmpfiles.d/t.conf", number: 2, type: "q", path: "/tmp", age: "10d", hasSpecifiers: false))
        #expect(lines[1].type == "D" && lines[1].age == "10d")
        #expect(lines[2].age == nil && !lines[2].isAge)
        #expect(lines[3].path == "/srv/with space" && lines[3].age == "~1w")
        #expect(lines[4].path == "/srv/a b" && lines[4].age == "cmA:30d")
        #expect(lines[5].isExclusion && lines[5].path == "/tmp/keep-*")
        #expect(lines[6].hasSpecifiers && lines[6].path == "%h/.cache")
    }

    @Test("a line for the root or a folder above it is noted once; one inside it names the rule; x silences, X does not")
    func notes() {
        let age = Tmpfiles.Line(file: "/usr/lib/tmpfiles.d/tmp.conf", number: 12, type: "q", path: "/tmp", age: "10d", hasSpecifiers: false)
        let inner = Tmpfiles.Line(file: "/etc/tmpfiles.d/x.conf", number: 3, type: "d", path: "/tmp/up/cache", age: "1d", hasSpecifiers: false)
        let scopes = [(rule: "uploads", path: "/tmp/up"), (rule: "other", path: "/tmp/other")]
        #expect(Tmpfiles.notes([age], root: "/tmp/up", scopes: scopes)
                == ["the root /tmp/up: also aged by /usr/lib/tmpfiles.d/tmp.conf:12 (10d), which ignores keep and minAge"])
        #expect(Tmpfiles.notes([inner], root: "/tmp", scopes: scopes)
                == ["rule 'uploads' (/tmp/up): also aged by /etc/tmpfiles.d/x.conf:3 (1d), which ignores keep and minAge"])
        func exclusion(_ type: Character, _ path: String) -> Tmpfiles.Line {
            Tmpfiles.Line(file: "/etc/tmpfiles.d/policyctl-up.conf", number: 3, type: type, path: path, age: nil, hasSpecifiers: false)
        }
        #expect(Tmpfiles.notes([age, exclusion("x", "/tmp/up")], root: "/tmp/up", scopes: scopes).isEmpty)
        #expect(Tmpfiles.notes([age, exclusion("x", "/tmp/u*")], root: "/tmp/up", scopes: scopes).isEmpty)
        #expect(Tmpfiles.notes([age, exclusion("X", "/tmp/up")], root: "/tmp/up", scopes: scopes).count == 1)
        #expect(Tmpfiles.notes([age], root: "/tmpfoo", scopes: []).isEmpty)
        let special = Tmpfiles.Line(file: "f", number: 1, type: "d", path: "%t/x", age: "1d", hasSpecifiers: true)
        #expect(Tmpfiles.notes([special], root: "/run/user/0/x", scopes: [])
                == ["f:1 ages %t/x (1d) with a specifier policyctl does not expand; it was not compared with the root"])
    }

    @Test("the x line quotes what tmpfiles would split or expand")
    func exclusionLine() {
        #expect(Tmpfiles.exclusionFile(root: "/srv/drop", job: "drop").contents.hasSuffix("\nx /srv/drop\n"))
        #expect(Tmpfiles.exclusionFile(root: "/srv/my drop%", job: "drop").contents.hasSuffix("\nx \"/srv/my drop%%\"\n"))
        #expect(Tmpfiles.exclusionFile(root: "/srv/drop", job: "drop").name == "policyctl-drop.conf")
        let parsed = Tmpfiles.parse(Array(Tmpfiles.exclusionFile(root: "/srv/my \"drop\"", job: "d").contents.utf8), file: "f")
        #expect(parsed.map(\.path) == ["/srv/my \"drop\""])
    }
}
