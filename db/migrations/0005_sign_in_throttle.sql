PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_login_throttle` (
	`email` text NOT NULL,
	`client` text DEFAULT '*' NOT NULL,
	`failures` integer DEFAULT 0 NOT NULL,
	`locked_until` integer,
	`updated_at` integer DEFAULT (unixepoch()) NOT NULL,
	PRIMARY KEY(`email`, `client`)
);
--> statement-breakpoint
INSERT INTO `__new_login_throttle`("email", "client", "failures", "locked_until", "updated_at") SELECT "email", '*', "failures", "locked_until", "updated_at" FROM `login_throttle`;--> statement-breakpoint
DROP TABLE `login_throttle`;--> statement-breakpoint
ALTER TABLE `__new_login_throttle` RENAME TO `login_throttle`;--> statement-breakpoint
PRAGMA foreign_keys=ON;