"""Fetches the Kafka broker psbench starts for the kafka driver: the jars of
org.apache.kafka:kafka_2.13 at the version pom.xml names, and everything they need at run
time, copied by Maven (~/.m2 is its repository) into $HOME/.cache/psbench/kafka/VERSION/
libs, outside the checkout, with a launcher beside them:

  kafka-java [JVM OPTIONS] MAIN_CLASS [ARGS]   java with the broker's classpath and log
                                               configuration (log4j2.properties)
  kafka-java --version                         the version the jars say they are

manifest.toml starts the broker and formats its storage through the launcher. Then one
training start of the broker (on 127.0.0.1, in a temporary folder, stopped once it has
started) leaves a class-data-sharing archive of the classes it loaded (kafka.jsa, JDK
dynamic AppCDS), which the launcher hands every later JVM: they map those classes instead
of loading and verifying them from the jars, and start faster. Once the folder is
complete (its file `complete`), a later call only rewrites the launcher and the log
configuration: no Maven, no network. The build runs this once (CMake target
kafka-broker, with a stamp file). Usage: fetch_broker.py [CACHE_DIR]"""

import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.6.1"
MVN_TIMEOUT_S = 900


def pom_version() -> str:
    found = re.search(r"<kafka\.version>([^<]+)</kafka\.version>", (HERE / "pom.xml").read_text())
    if not found:
        sys.exit(f"{HERE / 'pom.xml'}: no <kafka.version>")
    return found.group(1).strip()


def copy_jars(libs: Path) -> None:
    """mvn copies kafka_2.13 and its runtime dependencies into libs (made anew)."""
    partial = libs.with_name("libs.partial")
    shutil.rmtree(partial, ignore_errors=True)
    mvn = shutil.which("mvn")
    if mvn is None:
        sys.exit("kafka: mvn is not installed (Debian package maven; make setup installs it)")
    argv = [mvn, "-B", "-q", "-f", str(HERE / "pom.xml"), f"{DEPENDENCY_PLUGIN}:copy-dependencies",
            "-Dstyle.color=never", "-DincludeScope=runtime", f"-DoutputDirectory={partial}"]  # fmt: skip
    done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=MVN_TIMEOUT_S)  # fmt: skip
    if done.returncode != 0 or not any(partial.glob("kafka_2.13-*.jar")):
        shutil.rmtree(partial, ignore_errors=True)
        said = (done.stdout + done.stderr).strip()[-2000:]
        sys.exit(f"kafka: `{' '.join(argv)}` failed (exit code {done.returncode}):\n{said}")
    shutil.rmtree(libs, ignore_errors=True)
    partial.rename(libs)
    # An archive is valid only for the jars it was made from (their sizes and times).
    (libs.parent / "kafka.jsa").unlink(missing_ok=True)


def jar_version(libs: Path) -> str:
    """What kafka-clients says it is (its kafka/kafka-version.properties)."""
    [clients] = libs.glob("kafka-clients-*.jar")
    with zipfile.ZipFile(clients) as jar:
        text = jar.read("kafka/kafka-version.properties").decode()
    fields = dict(line.split("=", 1) for line in text.splitlines() if "=" in line)
    return f"Apache Kafka {fields.get('version', '?')} (commit {fields.get('commitId', '?')})"


LAUNCHER = """#!/bin/sh
# Written by {script}: java with the Kafka broker's jars (Maven Central,
# fetched with {pom}), psbench's log configuration and, once made, the class-data-sharing
# archive of a broker's start.
if [ "$1" = "--version" ]; then
  echo '{version}'
  exit 0
fi
if [ -f '{home}/kafka.jsa' ]; then
  set -- -XX:SharedArchiveFile='{home}/kafka.jsa' -Xlog:cds=off -Xlog:cds+dynamic=off "$@"
fi
exec java -Dlog4j2.configurationFile='{home}/log4j2.properties' -cp '{home}/libs/*' "$@"
"""

TRAINING_CONFIG = """process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:{controller}
listeners=PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller}
controller.listener.names=CONTROLLER
log.dirs={folder}/data
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
"""
TRAINING_TIMEOUT_S = 180


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def make_archive(home: Path) -> None:
    """One broker start with -XX:ArchiveClassesAtExit; kafka.jsa once it has stopped.
    Without it (a failure here) everything works, only slower to start."""
    launcher = str(home / "kafka-java")
    partial = home / "kafka.jsa.partial"
    partial.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory(prefix="psbench-kafka-training-") as folder:
        config = Path(folder) / "server.properties"
        config.write_text(TRAINING_CONFIG.format(port=free_port(), controller=free_port(),
                                                 folder=folder))  # fmt: skip
        formatted = subprocess.run(
            [launcher, "-XX:-UsePerfData", "kafka.tools.StorageTool", "format", "--config",
             str(config), "--cluster-id", "cHNiZW5jaC1rYWZrYS0wMQ"],
            capture_output=True, stdin=subprocess.DEVNULL, timeout=TRAINING_TIMEOUT_S,
        )  # fmt: skip
        if formatted.returncode != 0:
            print(f"kafka: no start archive (format failed: {formatted.stdout[-300:]!r})")
            return
        log = Path(folder) / "broker.log"
        with log.open("w") as out:
            broker = subprocess.Popen(
                [launcher, "-Xmx512m", "-XX:-UsePerfData", f"-XX:ArchiveClassesAtExit={partial}",
                 "kafka.Kafka", str(config)],
                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            )  # fmt: skip
        try:
            end = time.monotonic() + TRAINING_TIMEOUT_S
            while "Kafka Server started" not in log.read_text(errors="replace"):
                if broker.poll() is not None or time.monotonic() > end:
                    print(f"kafka: no start archive (the training broker did not start: {log})")
                    return
                time.sleep(0.2)
        finally:
            broker.terminate()  # the archive is written as the JVM exits
            try:
                broker.wait(timeout=TRAINING_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                broker.kill()
                broker.wait()
    if partial.is_file() and partial.stat().st_size > 0:
        os.replace(partial, home / "kafka.jsa")


def write_launcher(home: Path, version: str) -> None:
    shutil.copyfile(HERE / "log4j2.properties", home / "log4j2.properties")
    launcher = home / "kafka-java"
    text = LAUNCHER.format(script=Path(__file__).name, pom=HERE / "pom.xml",
                           version=version, home=home)  # fmt: skip
    partial = launcher.with_name("kafka-java.partial")
    partial.write_text(text)
    partial.chmod(0o755)
    os.replace(partial, launcher)


def main() -> None:
    cache = Path(sys.argv[1]) if len(sys.argv) > 1 else Path.home() / ".cache" / "psbench"
    home = cache / "kafka" / pom_version()
    home.mkdir(parents=True, exist_ok=True)
    complete = home / "complete"
    if not complete.exists():
        started = time.monotonic()
        copy_jars(home / "libs")
        print(f"kafka: fetched the broker's jars into {home / 'libs'} in "
              f"{time.monotonic() - started:.1f} s")  # fmt: skip
    version = jar_version(home / "libs")
    write_launcher(home, version)
    if not (home / "kafka.jsa").exists():
        started = time.monotonic()
        make_archive(home)
        print(f"kafka: class-data-sharing archive of a broker start in "
              f"{time.monotonic() - started:.1f} s")  # fmt: skip
    complete.write_text(version + "\n")


if __name__ == "__main__":
    main()
