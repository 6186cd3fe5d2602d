# Before the reboot: a service that crashes early during the next boot.
. /usr/local/lib/cds-vmtest/tests/lib.sh
systemctl enable cds-early-crash.service || fail "cannot enable the early-crash service"
