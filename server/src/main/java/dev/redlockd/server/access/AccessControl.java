package dev.redlockd.server.access;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The access rules in force, read from the --policy file (and the --tokens file, if any), and read
 * again on request. A reload takes both files whole or neither: a file that does not load leaves
 * the rules in force as they were, so a typo made on a live server never opens it up nor locks
 * everyone out.
 */
public final class AccessControl {
  private static final Logger log = LoggerFactory.getLogger(AccessControl.class);

  private final Path policyFile;
  private final Path tokenFile;
  private final AtomicReference<AccessRules> current;
  private final List<Runnable> onReload = new CopyOnWriteArrayList<>();
  /** The bytes last read, loaded or refused: an unchanged bad file is reported once, not every second. */
  private byte[] lastPolicy;
  private byte[] lastTokens;

  private AccessControl(Path policyFile, Path tokenFile, byte[] policyBytes, byte[] tokenBytes, AccessRules rules) {
    this.policyFile = policyFile;
    this.tokenFile = tokenFile;
    this.lastPolicy = policyBytes;
    this.lastTokens = tokenBytes;
    this.current = new AtomicReference<>(rules);
  }

  /** Loads both files, or throws with a one-line reason naming the file. {@code tokenFile} may be null. */
  public static AccessControl load(Path policyFile, Path tokenFile) throws PolicyException {
    byte[] policyBytes = read(policyFile, "--policy");
    byte[] tokenBytes = tokenFile == null ? new byte[0] : read(tokenFile, "--tokens");
    return new AccessControl(policyFile, tokenFile, policyBytes, tokenBytes,
        parse(policyFile, policyBytes, tokenFile, tokenBytes));
  }

  public AccessRules current() {
    return current.get();
  }

  /** Runs {@code action} after each reload that put new rules in force (on the reloading thread). */
  public void onReload(Runnable action) {
    onReload.add(action);
  }

  /** Where the policy comes from, for log lines. */
  public String describe() {
    AccessRules rules = current.get();
    return "policy " + policyFile + " (" + rules.policy().size() + " entries)"
        + (tokenFile == null ? ", no bearer tokens" : ", bearer tokens " + tokenFile + " (" + rules.tokens().size()
        + ")");
  }

  /** What a reload did. */
  public enum Outcome { UNCHANGED, LOADED, REFUSED }

  /**
   * Reads the files again. With {@code onlyIfChanged}, files whose bytes are those last read are
   * not parsed again (and a bad file already reported is not reported again); a SIGHUP asks for a
   * reload whatever the bytes.
   */
  public synchronized Outcome reload(boolean onlyIfChanged) {
    byte[] policyBytes;
    byte[] tokenBytes;
    try {
      policyBytes = read(policyFile, "--policy");
      tokenBytes = tokenFile == null ? new byte[0] : read(tokenFile, "--tokens");
    } catch (PolicyException e) {
      // A file caught half-written or moved away: reported once until it comes back.
      if (!onlyIfChanged || lastPolicy != null) {
        log.error("access policy not reloaded, the previous one stays in force: {}", e.getMessage());
      }
      lastPolicy = null;
      return Outcome.REFUSED;
    }
    if (onlyIfChanged && Arrays.equals(policyBytes, lastPolicy) && Arrays.equals(tokenBytes, lastTokens)) {
      return Outcome.UNCHANGED;
    }
    lastPolicy = policyBytes;
    lastTokens = tokenBytes;
    try {
      current.set(parse(policyFile, policyBytes, tokenFile, tokenBytes));
    } catch (PolicyException e) {
      log.error("access policy not reloaded, the previous one stays in force: {}", e.getMessage());
      return Outcome.REFUSED;
    }
    log.info("access policy reloaded: {}", describe());
    for (Runnable action : onReload) {
      try {
        action.run();
      } catch (RuntimeException e) {
        log.error("after an access policy reload: {}", e.toString());
      }
    }
    return Outcome.LOADED;
  }

  private static AccessRules parse(Path policyFile, byte[] policyBytes, Path tokenFile, byte[] tokenBytes)
      throws PolicyException {
    Policy policy;
    try {
      policy = PolicyParser.parse(new String(policyBytes, StandardCharsets.UTF_8));
    } catch (PolicyException e) {
      throw new PolicyException("--policy " + policyFile + ": " + e.getMessage(), e);
    }
    TokenFile tokens;
    try {
      tokens = TokenFile.parse(new String(tokenBytes, StandardCharsets.UTF_8));
    } catch (PolicyException e) {
      throw new PolicyException("--tokens " + tokenFile + ": " + e.getMessage(), e);
    }
    return new AccessRules(policy, tokens);
  }

  private static byte[] read(Path file, String flag) throws PolicyException {
    try {
      return Files.readAllBytes(file);
    } catch (IOException e) {
      String why = e instanceof java.nio.file.NoSuchFileException ? "no such file"
          : e instanceof java.nio.file.AccessDeniedException ? "permission denied"
          : "cannot read it";
      throw new PolicyException(flag + " " + file + ": " + why, e);
    }
  }
}
