# shellcheck shell=bash
# Sourced by node-side bench scripts: manager_verbose on|off puts the
# manager at debug level (its step profiles; journald unthrottled so none
# is dropped) or back, and restarts it.
manager_verbose() {
	local d=/etc/systemd/system/taskscope-manager.service.d exe
	mkdir -p $d /etc/systemd/journald.conf.d
	if [[ $1 == on ]]; then
		printf '[Journal]\nRateLimitIntervalSec=0\n' >/etc/systemd/journald.conf.d/90-bench-verbose.conf
		exe=$(systemctl show -P ExecStart taskscope-manager | sed -n 's/.*path=\([^ ;]*\).*/\1/p')
		printf '[Service]\nExecStart=\nExecStart=%s -v\n' "$exe" >$d/90-bench-verbose.conf
	else
		rm -f $d/90-bench-verbose.conf /etc/systemd/journald.conf.d/90-bench-verbose.conf
	fi
	systemctl restart systemd-journald
	systemctl daemon-reload
	systemctl restart taskscope-manager
}
