# Homebrew formula for policyctl: `brew install --HEAD ./Formula/policyctl.rb`, or from a tap that copies this
# file. It installs what `make install` does (Makefile), in the same layout under Homebrew's prefix: the binary,
# the man pages, the completions, share/policyctl (policies, schema, systemd examples) and lib/policyctl, the
# library and modules a Swift policy (`--policy X.swift`, Docs/scripting.md) compiles against.
# Tests/StoragePolicyTests/Schema/EcosystemTests.swift checks that every file named here exists and that the
# layout matches the Makefile's.
class Policyctl < Formula
  desc "Declarative storage policies: plan, journaled apply, recover and audit"
  homepage "https://github.com/example/policyctl"
  head "https://github.com/example/policyctl.git", branch: "main"

  depends_on "pkgconf" => :build
  depends_on "libyaml"

  on_macos do
    depends_on xcode: ["16.0", :build]
  end

  on_linux do
    depends_on "swift" => :build
  end

  def install
    args = ["--disable-sandbox", "-c", "release"]
    system "swift", "build", *args, "--product", "policyctl"
    system "swift", "build", *args, "--product", "PolicyctlScripting"
    bin_path = Utils.safe_popen_read("swift", "build", *args, "--show-bin-path").chomp

    bin.install "#{bin_path}/policyctl"
    (man1/"policyctl.1").write Utils.safe_popen_read(bin/"policyctl", "manpage", "--section", "1")
    (man5/"policyctl-policy.5").write Utils.safe_popen_read(bin/"policyctl", "manpage", "--section", "5")
    generate_completions_from_executable(bin/"policyctl", "completions", shells: [:bash, :zsh, :fish])

    (pkgshare/"policies").install Dir["Policies/*.yaml"], Dir["Policies/*.swift"]
    pkgshare.install "Docs/policy.schema.json"
    (pkgshare/"systemd").install Dir["Docs/systemd/*.service"], Dir["Docs/systemd/*.timer"]

    # lib/policyctl: what a compiled Swift policy imports and links, found relative to bin/policyctl.
    scripting = lib/"policyctl"
    scripting.install "#{bin_path}/#{shared_library("libPolicyctlScripting")}"
    (scripting/"Modules").install Dir["#{bin_path}/Modules/StoragePolicy*.swiftmodule"],
                                  "#{bin_path}/Modules/PolicyctlCommands.swiftmodule"
    (scripting/"include/CPosix").install "Sources/CPosix/include/CPosix.h"
    (scripting/"include/CPosix/module.modulemap").write <<~EOS
      module CPosix {
          umbrella header "CPosix.h"
          export *
      }
    EOS
    (scripting/"include/CYAML").install "Sources/CYAML/shim.h"
    # No `link "yaml"`: the library already links libyaml, so a policy needs no libyaml headers to link.
    (scripting/"include/CYAML/module.modulemap").write <<~EOS
      module CYAML [system] {
          header "shim.h"
          export *
      }
    EOS
  end

  test do
    (testpath/"policy.yaml").write <<~EOS
      version: 1
      name: brew-test
      rules:
        - name: tmp-expiry
          path: tmp
          expire: { after: 1h }
    EOS
    (testpath/"root/tmp").mkpath
    system bin/"policyctl", "validate", testpath/"policy.yaml"
    assert_match "Plan for policy 'brew-test'", shell_output("#{bin}/policyctl plan --policy #{testpath}/policy.yaml --root #{testpath}/root")
  end
end
